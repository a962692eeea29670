using Microsoft.Net.Http.Headers;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>Headers that describe one connection, not the message, and so never cross the tunnel (RFC 9110 §7.6.1).</summary>
public static class HopByHopHeaders
{
    private static readonly HashSet<string> Names = new(StringComparer.OrdinalIgnoreCase)
    {
        HeaderNames.Connection,
        HeaderNames.KeepAlive,
        HeaderNames.ProxyAuthenticate,
        HeaderNames.ProxyAuthorization,
        "Proxy-Connection",
        HeaderNames.TE,
        HeaderNames.Trailer,
        HeaderNames.TransferEncoding,
        HeaderNames.Upgrade,
    };

    public static bool Contains(string name) => Names.Contains(name);
}
