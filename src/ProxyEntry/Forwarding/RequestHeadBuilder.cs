using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// Turns the caller's request into the head sent to the client: end-to-end headers as they came (repeats kept),
/// hop-by-hop ones dropped, and the <c>X-Forwarded-*</c> set replaced, as YARP does by default. The backend sees its
/// own Host; the caller's Host travels in <c>X-Forwarded-Host</c>.
/// </summary>
public static class RequestHeadBuilder
{
    public const string ForwardedFor = "X-Forwarded-For";
    public const string ForwardedProto = "X-Forwarded-Proto";
    public const string ForwardedHost = "X-Forwarded-Host";
    public const string ForwardedPrefix = "X-Forwarded-Prefix";

    public static RequestHead Build(HttpContext context, string backendTarget, string prefix) =>
        Build(context, backendTarget, prefix, out _);

    /// <param name="receivedHeaderBytes">
    /// The size of the caller's header block as it came in (<c>name: value\r\n</c> per value, every header counted),
    /// measured in the same pass, for the MaxRequestHeadersBytes check.
    /// </param>
    public static RequestHead Build(HttpContext context, string backendTarget, string prefix, out long receivedHeaderBytes)
    {
        HttpRequest request = context.Request;
        IHeaderDictionary source = request.Headers;
        var headers = new List<HeaderField>(source.Count + 4);
        StringValues connectionTokens = source.Connection;
        long received = 0;
        foreach (KeyValuePair<string, StringValues> header in source)
        {
            string name = header.Key;
            foreach (string? value in header.Value)
            {
                received += name.Length + (value?.Length ?? 0) + 4;
            }

            if (HopByHopHeaders.Contains(name)
                || string.Equals(name, HeaderNames.Host, StringComparison.OrdinalIgnoreCase)
                || IsForwardedHeader(name)
                || NamedByConnection(connectionTokens, name))
            {
                continue;
            }

            foreach (string? value in header.Value)
            {
                headers.Add(new HeaderField(name, value ?? string.Empty));
            }
        }

        headers.Add(new HeaderField(ForwardedFor, context.Connection.RemoteIpAddress?.ToString() ?? string.Empty));
        headers.Add(new HeaderField(ForwardedProto, request.Scheme));
        if (request.Host.HasValue)
        {
            headers.Add(new HeaderField(ForwardedHost, request.Host.Value));
        }

        headers.Add(new HeaderField(ForwardedPrefix, prefix));
        receivedHeaderBytes = received;
        return new RequestHead(request.Method, backendTarget, headers);
    }

    private static bool IsForwardedHeader(string name) =>
        name.StartsWith("X-Forwarded-", StringComparison.OrdinalIgnoreCase)
        && (name.Length == ForwardedFor.Length || name.Length == ForwardedHost.Length || name.Length == ForwardedProto.Length || name.Length == ForwardedPrefix.Length)
        && (name.Equals(ForwardedFor, StringComparison.OrdinalIgnoreCase)
            || name.Equals(ForwardedProto, StringComparison.OrdinalIgnoreCase)
            || name.Equals(ForwardedHost, StringComparison.OrdinalIgnoreCase)
            || name.Equals(ForwardedPrefix, StringComparison.OrdinalIgnoreCase));

    /// <summary>Headers listed in <c>Connection</c> are hop-by-hop too (RFC 9110 §7.6.1).</summary>
    private static bool NamedByConnection(StringValues connection, string name)
    {
        if (connection.Count == 0)
        {
            return false;
        }

        foreach (string? value in connection)
        {
            if (value is null)
            {
                continue;
            }

            foreach (Range token in value.AsSpan().Split(','))
            {
                if (value.AsSpan()[token].Trim().Equals(name, StringComparison.OrdinalIgnoreCase))
                {
                    return true;
                }
            }
        }

        return false;
    }
}
