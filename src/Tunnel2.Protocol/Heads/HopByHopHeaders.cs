namespace Tunnel2.Protocol.Heads;

/// <summary>
/// Headers that describe one connection, not the message, and so never cross the tunnel (RFC 9110 §7.6.1,
/// docs/protocol.md §3): dropped by ProxyEntry from requests and responses, and by TunnelClient from the backend's
/// responses. The names a <c>Connection</c> header lists are dropped too, by whoever reads it.
/// </summary>
public static class HopByHopHeaders
{
    private static readonly HashSet<string> Names = new(StringComparer.OrdinalIgnoreCase)
    {
        "Connection",
        "Keep-Alive",
        "Proxy-Authenticate",
        "Proxy-Authorization",
        "Proxy-Connection",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
    };

    public static bool Contains(string name) => Names.Contains(name);
}
