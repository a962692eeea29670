using System.Net;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// Where callers reach a session's TCP port, as the client is told (<c>host:port</c>): the bind address, or, when that is
/// a wildcard (0.0.0.0, ::), the host the client dialled, as <see cref="Uplinks.Handshake.PublicSessionUrl"/> does for the URL.
/// </summary>
public static class TcpPublicAddress
{
    public static string For(IPAddress bound, int port, string? dialledHost)
    {
        string host = bound.ToString();
        if ((bound.Equals(IPAddress.Any) || bound.Equals(IPAddress.IPv6Any)) && HostOf(dialledHost) is { } dialled)
        {
            host = dialled;
        }
        else if (bound.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6)
        {
            host = $"[{host}]";
        }

        return $"{host}:{port}";
    }

    private static string? HostOf(string? hostHeader) =>
        !string.IsNullOrWhiteSpace(hostHeader) && Uri.TryCreate($"http://{hostHeader.Trim()}/", UriKind.Absolute, out Uri? parsed) ? parsed.Host : null;
}
