using System.Net;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Primitives;

namespace Tunnel2.Spikes.Http2Uplink;

/// <summary>
/// Relays one Kestrel request through an <see cref="HttpMessageInvoker"/> and copies the answer back: headers minus
/// hop-by-hop ones, bodies streamed both ways (the request body is read while the response may already flow).
/// Used by both ends: the spike server (public request → HTTP/2 over the uplink) and the spike client
/// (request that came over the uplink → backend over HTTP/1.1).
/// </summary>
internal static class HttpRelay
{
    private static readonly HashSet<string> HopByHop = new(StringComparer.OrdinalIgnoreCase)
    {
        "Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection",
        "TE", "Trailer", "Transfer-Encoding", "Upgrade",
    };

    /// <summary>A lean pooled handler: no proxy, no cookies, no redirects, no decompression, no trace headers.</summary>
    public static SocketsHttpHandler NewHandler() => new()
    {
        UseProxy = false,
        UseCookies = false,
        AllowAutoRedirect = false,
        AutomaticDecompression = DecompressionMethods.None,
        MaxConnectionsPerServer = 10_000,
        ActivityHeadersPropagator = null,
        ConnectTimeout = TimeSpan.FromSeconds(10),
    };

    /// <param name="target">Absolute URI to send to (path and query already mapped).</param>
    /// <param name="addForwarded">Sets extra request headers (X-Forwarded-*), or null.</param>
    public static async Task RelayAsync(
        HttpContext context,
        HttpMessageInvoker invoker,
        Uri target,
        Version version,
        HttpVersionPolicy versionPolicy,
        Action<HttpContext, HttpRequestMessage>? addForwarded)
    {
        var aborted = context.RequestAborted;
        using var request = new HttpRequestMessage(HttpMethod.Parse(context.Request.Method), target)
        {
            Version = version,
            VersionPolicy = versionPolicy,
        };

        var hasBody = context.Request.ContentLength > 0
            || (context.Request.ContentLength is null
                && context.Features.Get<IHttpRequestBodyDetectionFeature>()?.CanHaveBody == true);
        if (hasBody)
        {
            request.Content = new StreamContent(context.Request.Body, 65536);
        }

        foreach (var (name, values) in context.Request.Headers)
        {
            if (HopByHop.Contains(name)
                || name.Equals("Host", StringComparison.OrdinalIgnoreCase)
                || name.StartsWith(':')
                || (addForwarded is not null && name.StartsWith("X-Forwarded-", StringComparison.OrdinalIgnoreCase)))
            {
                continue;
            }

            if (IsContentHeader(name))
            {
                if (request.Content is not null)
                {
                    AddHeader(request.Content.Headers, name, values);
                }
            }
            else
            {
                AddHeader(request.Headers, name, values);
            }
        }

        addForwarded?.Invoke(context, request);

        HttpResponseMessage response;
        try
        {
            response = await invoker.SendAsync(request, aborted);
        }
        catch (Exception ex) when (!aborted.IsCancellationRequested)
        {
            if (!context.Response.HasStarted)
            {
                await Problem(context, StatusCodes.Status502BadGateway, "Bad gateway", ex.GetBaseException().Message);
            }

            return;
        }
        catch (OperationCanceledException)
        {
            return; // the caller went away
        }

        using (response)
        {
            context.Response.StatusCode = (int)response.StatusCode;
            var responseHeaders = context.Response.Headers;
            foreach (var header in response.Headers.NonValidated)
            {
                if (!HopByHop.Contains(header.Key))
                {
                    responseHeaders.Append(header.Key, ToStringValues(header.Value));
                }
            }

            foreach (var header in response.Content.Headers.NonValidated)
            {
                responseHeaders.Append(header.Key, ToStringValues(header.Value));
            }

            try
            {
                await using var body = await response.Content.ReadAsStreamAsync(aborted);
                await body.CopyToAsync(context.Response.Body, 65536, aborted);
            }
            catch (Exception) when (aborted.IsCancellationRequested)
            {
                // the caller went away
            }
            catch (Exception)
            {
                // The upstream body broke after the head was sent: abort so the caller sees a cut, not a clean end.
                context.Abort();
            }
        }
    }

    public static Task Problem(HttpContext context, int status, string title, string detail)
    {
        context.Response.StatusCode = status;
        context.Response.ContentType = "application/problem+json";
        return context.Response.WriteAsJsonAsync(
            new ProblemBody(status, title, detail),
            ProblemJsonContext.Default.ProblemBody,
            "application/problem+json");
    }

    private static bool IsContentHeader(string name) =>
        name.StartsWith("Content-", StringComparison.OrdinalIgnoreCase)
        || name.Equals("Expires", StringComparison.OrdinalIgnoreCase)
        || name.Equals("Last-Modified", StringComparison.OrdinalIgnoreCase)
        || name.Equals("Allow", StringComparison.OrdinalIgnoreCase);

    private static void AddHeader(System.Net.Http.Headers.HttpHeaders headers, string name, StringValues values)
    {
        if (values.Count == 1)
        {
            headers.TryAddWithoutValidation(name, values.ToString());
        }
        else
        {
            headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values);
        }
    }

    private static StringValues ToStringValues(System.Net.Http.Headers.HeaderStringValues values)
    {
        if (values.Count == 1)
        {
            return new StringValues(values.ToString());
        }

        var array = new string[values.Count];
        var i = 0;
        foreach (var value in values)
        {
            array[i++] = value;
        }

        return new StringValues(array);
    }
}

internal sealed record ProblemBody(int Status, string Title, string Detail);

[System.Text.Json.Serialization.JsonSerializable(typeof(ProblemBody))]
[System.Text.Json.Serialization.JsonSourceGenerationOptions(PropertyNamingPolicy = System.Text.Json.Serialization.JsonKnownNamingPolicy.CamelCase)]
internal sealed partial class ProblemJsonContext : System.Text.Json.Serialization.JsonSerializerContext;
