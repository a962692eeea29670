using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.HttpOverrides;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.ProxyEntry.Heads;

/// <summary>
/// Turns the caller's request into the head sent to the client: end-to-end headers as they came (repeats kept),
/// hop-by-hop ones dropped, and the <c>X-Forwarded-*</c> set replaced, as YARP does by default. The caller's Host
/// travels in <c>X-Forwarded-Host</c> only: the client writes the backend's Host from it, or from its own choice
/// (<c>--host-header</c>, docs/protocol.md §8). An upgrade request keeps its <c>Upgrade</c> field
/// (the client writes <c>Connection: Upgrade</c> beside it, docs/protocol.md §3). In the same pass it judges whether the head may
/// cross at all (<see cref="RequestHeadProblem"/>): a request the next hop could frame differently never does.
/// </summary>
public static class RequestHeadBuilder
{
    public const string ForwardedFor = "X-Forwarded-For";
    public const string ForwardedProto = "X-Forwarded-Proto";
    public const string ForwardedHost = "X-Forwarded-Host";
    public const string ForwardedPrefix = "X-Forwarded-Prefix";

    /// <summary>The header Kestrel moves a caller's Content-Length to when Transfer-Encoding came too.</summary>
    private const string MovedContentLength = "X-Content-Length";

    public static RequestHead Build(HttpContext context, string backendTarget, string prefix) =>
        Build(context, backendTarget, prefix, out _, out _);

    /// <summary>
    /// Whether the caller asks to switch protocols: on HTTP/1.1 with <c>Connection: Upgrade</c> and an <c>Upgrade</c>
    /// field (RFC 9110 §7.8; Kestrel refuses such a request with a body), on HTTP/2 with an extended CONNECT (RFC 8441).
    /// </summary>
    public static bool IsUpgrade(HttpContext context) => IsHttp1Upgrade(context) || IsExtendedConnect(context, out _);

    /// <summary>
    /// An HTTP/2 extended CONNECT (RFC 8441, a WebSocket over HTTP/2): the backend speaks HTTP/1.1, so it is sent on as
    /// the HTTP/1.1 upgrade it stands for, and a 101 comes back to the caller as 200 (<see cref="ResponseHeadWriter"/>).
    /// </summary>
    /// <param name="protocol">The <c>:protocol</c> pseudo-header, e.g. <c>websocket</c>.</param>
    public static bool IsExtendedConnect(HttpContext context, [NotNullWhen(true)] out string? protocol)
    {
        if (context.Features.Get<IHttpExtendedConnectFeature>() is { IsExtendedConnect: true, Protocol: { } named })
        {
            protocol = named;
            return true;
        }

        protocol = null;
        return false;
    }

    /// <param name="receivedHeaderBytes">
    /// The size of the caller's header block as it came in (<c>name: value\r\n</c> per value, every header counted),
    /// measured in the same pass, for the MaxRequestHeadersBytes check.
    /// </param>
    /// <param name="problem">Why the request must be refused instead of forwarded; <see cref="RequestHeadProblem.None"/> if it may go.</param>
    public static RequestHead Build(HttpContext context, string backendTarget, string prefix, out long receivedHeaderBytes, out RequestHeadProblem problem)
    {
        HttpRequest request = context.Request;
        IHeaderDictionary source = request.Headers;
        var headers = new List<HeaderField>(source.Count + 4);
        StringValues connectionTokens = source.Connection;
        long received = 0;
        bool extendedConnect = IsExtendedConnect(context, out string? protocol);
        bool upgrade = extendedConnect || IsHttp1Upgrade(context);
        problem = RequestHeadProblem.None;
        bool lengthGiven = false;
        foreach (KeyValuePair<string, StringValues> header in source)
        {
            string name = header.Key;
            foreach (string? value in header.Value)
            {
                received += name.Length + (value?.Length ?? 0) + 4;
            }

            if (!HttpSyntax.IsToken(name))
            {
                problem = RequestHeadProblem.InvalidHeaderName;
            }

            lengthGiven |= string.Equals(name, HeaderNames.ContentLength, StringComparison.OrdinalIgnoreCase)
                           || string.Equals(name, MovedContentLength, StringComparison.OrdinalIgnoreCase);

            if (!Crosses(name, upgrade, connectionTokens))
            {
                continue;
            }

            foreach (string? value in header.Value)
            {
                headers.Add(new HeaderField(name, value ?? string.Empty));
            }
        }

        if (problem == RequestHeadProblem.None && source.TransferEncoding.Count > 0)
        {
            problem = lengthGiven ? RequestHeadProblem.ContentLengthWithTransferEncoding : JudgeTransferEncoding(source.TransferEncoding);
        }

        string method = request.Method;
        if (extendedConnect)
        {
            method = HttpMethods.Get;
            AddHttp1Upgrade(headers, protocol!, source);
        }

        AddForwardedHeaders(context, headers, prefix);
        receivedHeaderBytes = received;
        return new RequestHead(method, backendTarget, headers, upgrade);
    }

    /// <summary>
    /// Whether a caller's header crosses the tunnel: hop-by-hop ones, Host, the caller's own <c>X-Forwarded-*</c> and the
    /// forwarded-headers middleware's <c>X-Original-*</c> do not. Upgrade is hop-by-hop, but the one field the backend
    /// must see to switch; Connection: Upgrade is the client's to write.
    /// </summary>
    private static bool Crosses(string name, bool upgrade, StringValues connectionTokens) =>
        (upgrade && string.Equals(name, HeaderNames.Upgrade, StringComparison.OrdinalIgnoreCase))
        || !(HopByHopHeaders.Contains(name)
             || string.Equals(name, HeaderNames.Host, StringComparison.OrdinalIgnoreCase)
             || IsForwardedHeader(name)
             || NamedByConnection(connectionTokens, name));

    /// <summary>An extended CONNECT goes on as the HTTP/1.1 upgrade it stands for.</summary>
    private static void AddHttp1Upgrade(List<HeaderField> headers, string protocol, IHeaderDictionary source)
    {
        headers.Add(new HeaderField(HeaderNames.Upgrade, protocol));
        if (protocol.Equals("websocket", StringComparison.OrdinalIgnoreCase) && source.SecWebSocketKey.Count == 0)
        {
            // RFC 8441 drops the key (HTTP/2 needs no proof that the server speaks WebSocket); an HTTP/1.1 backend wants one.
            headers.Add(new HeaderField(HeaderNames.SecWebSocketKey, Convert.ToBase64String(RandomNumberGenerator.GetBytes(16))));
        }
    }

    /// <summary>The <c>X-Forwarded-*</c> set this side writes, in place of any the caller sent.</summary>
    private static void AddForwardedHeaders(HttpContext context, List<HeaderField> headers, string prefix)
    {
        HttpRequest request = context.Request;
        headers.Add(new HeaderField(ForwardedFor, context.Connection.RemoteIpAddress?.ToString() ?? string.Empty));
        headers.Add(new HeaderField(ForwardedProto, request.Scheme));
        if (request.Host.HasValue)
        {
            headers.Add(new HeaderField(ForwardedHost, request.Host.Value));
        }

        if (prefix.Length > 0)
        {
            headers.Add(new HeaderField(ForwardedPrefix, prefix));
        }
    }

    private static bool IsHttp1Upgrade(HttpContext context) =>
        context.Features.Get<IHttpUpgradeFeature>() is { IsUpgradableRequest: true } && context.Request.Headers.Upgrade.Count > 0;

    /// <summary>The tunnel re-frames bodies itself, so it accepts the one coding it can undo: a single <c>chunked</c>.</summary>
    private static RequestHeadProblem JudgeTransferEncoding(StringValues transferEncoding)
    {
        int chunked = 0;
        foreach (string? value in transferEncoding)
        {
            foreach (Range token in (value ?? string.Empty).AsSpan().Split(','))
            {
                ReadOnlySpan<char> coding = value.AsSpan()[token].Trim();
                if (coding.Equals("chunked", StringComparison.OrdinalIgnoreCase))
                {
                    chunked++;
                }
                else if (!coding.IsEmpty)
                {
                    return RequestHeadProblem.UnsupportedTransferCoding;
                }
            }
        }

        return chunked == 1 ? RequestHeadProblem.None : RequestHeadProblem.InvalidTransferEncoding;
    }

    /// <summary>
    /// The <c>X-Forwarded-*</c> set this side writes, and the <c>X-Original-*</c> names in which ASP.NET Core's
    /// forwarded-headers middleware keeps what it replaced when it believes a trusted proxy (<c>TrustedProxies</c>):
    /// the backend gets one clean set, neither the caller's nor the middleware's leftovers.
    /// </summary>
    private static bool IsForwardedHeader(string name) =>
        (name.StartsWith("X-Forwarded-", StringComparison.OrdinalIgnoreCase)
         && (name.Length == ForwardedFor.Length || name.Length == ForwardedHost.Length || name.Length == ForwardedProto.Length || name.Length == ForwardedPrefix.Length)
         && (name.Equals(ForwardedFor, StringComparison.OrdinalIgnoreCase)
             || name.Equals(ForwardedProto, StringComparison.OrdinalIgnoreCase)
             || name.Equals(ForwardedHost, StringComparison.OrdinalIgnoreCase)
             || name.Equals(ForwardedPrefix, StringComparison.OrdinalIgnoreCase)))
        || (name.StartsWith("X-Original-", StringComparison.OrdinalIgnoreCase)
            && (name.Equals(ForwardedHeadersDefaults.XOriginalForHeaderName, StringComparison.OrdinalIgnoreCase)
                || name.Equals(ForwardedHeadersDefaults.XOriginalProtoHeaderName, StringComparison.OrdinalIgnoreCase)
                || name.Equals(ForwardedHeadersDefaults.XOriginalHostHeaderName, StringComparison.OrdinalIgnoreCase)
                || name.Equals(ForwardedHeadersDefaults.XOriginalPrefixHeaderName, StringComparison.OrdinalIgnoreCase)));

    /// <summary>Headers listed in <c>Connection</c> are hop-by-hop too (RFC 9110 §7.6.1).</summary>
    private static bool NamedByConnection(StringValues connection, string name)
    {
        if (connection.Count == 0)
        {
            return false;
        }

        foreach (string? value in connection)
        {
            if (HttpSyntax.ListsToken(value, name))
            {
                return true;
            }
        }

        return false;
    }
}
