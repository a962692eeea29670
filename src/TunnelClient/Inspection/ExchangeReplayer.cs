using System.Net;
using System.Net.Http.Headers;
using System.Text;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Shaping;

namespace Tunnel2.TunnelClient.Inspection;

/// <summary>
/// Sends a kept request to the backend again, as it was or edited, and records the exchange as a new one (with
/// <see cref="InspectedExchange.ReplayOf"/>) so it shows in the list like any other. It goes straight to the backend
/// that answered the original (another when that one is gone) with <see cref="HttpClient"/>, not through the tunnel:
/// the server and the public caller take no part in it, and its response goes nowhere but to the inspector.
/// </summary>
public sealed class ExchangeReplayer : IDisposable
{
    private static readonly TimeSpan ReplayTimeout = TimeSpan.FromSeconds(30);

    private readonly BackendSet _backends;
    private readonly RequestInspector _inspector;
    private readonly ILogger<ExchangeReplayer> _logger;
    private readonly HttpClient _http;

    public ExchangeReplayer(BackendSet backends, RequestInspector inspector, ILogger<ExchangeReplayer> logger)
    {
        _backends = backends;
        _inspector = inspector;
        _logger = logger;
        // As the relay does: no redirects followed, no cookies kept, bodies passed as they come (no decompression).
#pragma warning disable CA2000 // the HttpClient owns its handler (disposeHandler defaults to true); Dispose disposes the client
        _http = new HttpClient(new SocketsHttpHandler
        {
            AllowAutoRedirect = false,
            UseCookies = false,
            AutomaticDecompression = DecompressionMethods.None,
            ConnectTimeout = TimeSpan.FromSeconds(10),
            PooledConnectionIdleTimeout = TimeSpan.FromMinutes(1),
        })
        {
            Timeout = ReplayTimeout,
        };
#pragma warning restore CA2000
    }

    /// <exception cref="ReplayRefusedException">The request cannot be replayed as asked.</exception>
    public async Task<InspectedExchange> ReplayAsync(InspectedExchange original, ReplayEdit? edit, CancellationToken cancellationToken)
    {
        if (original.IsUpgradeRequest)
        {
            throw new ReplayRefusedException("An upgrade request (a WebSocket, …) cannot be replayed: its exchange goes on after the response head.");
        }

        string method = string.IsNullOrWhiteSpace(edit?.Method) ? original.Method : edit.Method.Trim();
        string target = string.IsNullOrWhiteSpace(edit?.Target) ? original.Target : edit.Target.Trim();
        if (!HttpSyntax.IsToken(method))
        {
            throw new ReplayRefusedException($"'{method}' is not a method name.");
        }

        if (!target.StartsWith('/'))
        {
            throw new ReplayRefusedException($"The target must be a path (and query) starting with '/', not '{target}'.");
        }

        List<HeaderField> headers = edit?.Headers is { } edited ? Unredacted(edited, original) : [.. original.RequestHeaders];
        byte[] body = BodyOf(original, edit);
        Backend backend = BackendFor(original);

        ExchangeCapture capture = _inspector.Begin(method, target, headers, original.Id);
        capture.SetBackend(backend.ToString());
        capture.RequestBody.Observe(body);
        try
        {
            using HttpRequestMessage request = RequestMessage(method, new Uri(backend.Url, target), headers, body);
            // The Host the relay sent (the caller's, kept in X-Forwarded-Host, under --host-header preserve), not the URL's.
            // Not for an https backend: HttpClient would also take it as the TLS server name, which the relay never does.
            string host = backend.Url.Scheme == Uri.UriSchemeHttp ? _backends.HostHeader.For(headers, backend.Host) : backend.Host;
            request.Headers.Host = host;
            capture.SetHost(host);
            using HttpResponseMessage response = await _http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
            capture.OnResponseHead((int)response.StatusCode, HeadersOf(response));
            await using Stream content = await response.Content.ReadAsStreamAsync(cancellationToken);
            byte[] buffer = new byte[16 * 1024];
            int read;
            while ((read = await content.ReadAsync(buffer, cancellationToken)) > 0)
            {
                capture.ResponseBody.Observe(buffer.AsSpan(0, read));
            }
        }
        catch (Exception ex) when (ex is HttpRequestException or IOException or OperationCanceledException)
        {
            capture.Fail(ex is OperationCanceledException && !cancellationToken.IsCancellationRequested
                ? $"no answer within {ReplayTimeout.TotalSeconds:0} s"
                : ex.Message);
        }

        InspectedExchange replayed = capture.Complete()!;
        TunnelClientLog.RequestReplayed(_logger, original.Id, replayed.Id, method, target, backend.ToString(), replayed.Status ?? 0);
        return replayed;
    }

    public void Dispose() => _http.Dispose();

    private Backend BackendFor(InspectedExchange original)
    {
        foreach (Backend backend in _backends.All)
        {
            if (backend.ToString() == original.Backend)
            {
                return backend;
            }
        }

        return _backends.Pick(affinityKey: null) ?? _backends.All[0];
    }

    /// <summary>The edited fields, where a <c>[redacted]</c> value stands for the original's value of that header.</summary>
    private static List<HeaderField> Unredacted(List<HeaderView> edited, InspectedExchange original)
    {
        var headers = new List<HeaderField>(edited.Count);
        foreach (HeaderView header in edited)
        {
            if (string.IsNullOrWhiteSpace(header.Name))
            {
                continue;
            }

            string name = header.Name.Trim();
            string value = header.Value == InspectorRedaction.Placeholder
                ? InspectorViews.ValueOf(original.RequestHeaders, name) ?? ""
                : header.Value ?? "";
            if (!HttpSyntax.IsToken(name) || !HttpSyntax.IsSafeFieldValue(value))
            {
                throw new ReplayRefusedException($"The header '{name}' is not a valid field name, or its value holds a line break.");
            }

            headers.Add(new HeaderField(name, value));
        }

        return headers;
    }

    private static byte[] BodyOf(InspectedExchange original, ReplayEdit? edit)
    {
        if (edit?.Body is { } text)
        {
            return Encoding.UTF8.GetBytes(text);
        }

        if (original.RequestBody is { Truncated: true } cut)
        {
            throw new ReplayRefusedException(
                $"Only the first {cut.Bytes.Length} of the body's {cut.Size} bytes were kept (TunnelClient:Inspector:BodyLimit): edit the body, or raise the limit.");
        }

        return original.RequestBody?.Bytes ?? [];
    }

    /// <summary>
    /// The request as <see cref="HttpClient"/> takes it: content fields on the content, framing fields (and the
    /// connection's own) left to the handler; <c>Host</c> is set as the relay sets it (<see cref="HostHeaderPolicy"/>).
    /// </summary>
    private static HttpRequestMessage RequestMessage(string method, Uri url, List<HeaderField> headers, byte[] body)
    {
        var request = new HttpRequestMessage(new HttpMethod(method), url);
        var content = new ByteArrayContent(body);
        content.Headers.ContentType = null;
        bool hasContentFields = false;
        foreach (HeaderField header in headers)
        {
            if (HopByHopHeaders.Contains(header.Name) || header.Name.Equals("Host", StringComparison.OrdinalIgnoreCase)
                || header.Name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase)
                || header.Name.Equals("Expect", StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            if (!request.Headers.TryAddWithoutValidation(header.Name, header.Value))
            {
                hasContentFields |= content.Headers.TryAddWithoutValidation(header.Name, header.Value);
            }
        }

        if (body.Length > 0 || hasContentFields)
        {
            request.Content = content;
        }
        else
        {
            content.Dispose();
        }

        return request;
    }

    private static List<HeaderField> HeadersOf(HttpResponseMessage response)
    {
        var headers = new List<HeaderField>();
        foreach (KeyValuePair<string, HeaderStringValues> header in response.Headers.NonValidated)
        {
            foreach (string value in header.Value)
            {
                headers.Add(new HeaderField(header.Key, value));
            }
        }

        foreach (KeyValuePair<string, HeaderStringValues> header in response.Content.Headers.NonValidated)
        {
            foreach (string value in header.Value)
            {
                headers.Add(new HeaderField(header.Key, value));
            }
        }

        return headers;
    }
}
