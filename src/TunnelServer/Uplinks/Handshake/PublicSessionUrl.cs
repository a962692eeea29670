using System.Net;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>
/// The URL a client is told its session is reached at (<c>Tunnel2-Public-Url</c>), which it prints as ngrok does: the
/// session's own first host name when it has one (<c>ProxyEntry:Sessions:{id}:Hosts</c>, as ngrok prints a reserved
/// domain), else <c>{session}.{host suffix}</c> when host routing is on, else <c>/session/{session}/</c> on the public
/// listener. A
/// listener on a wildcard address (0.0.0.0, [::]) names no host a caller could use, so the host the client dialled
/// (its <c>Host</c> header) stands in for it, with the public port.
/// </summary>
public static class PublicSessionUrl
{
    /// <param name="ownHost">The session's first own host name; null when it has none.</param>
    public static string For(string session, Uri publicListener, string? hostSuffix, string? dialledHost, string? ownHost = null)
    {
        string host = publicListener.Host;
        if (IsWildcard(publicListener) && HostOf(dialledHost) is { } dialled)
        {
            host = dialled;
        }

        var url = new UriBuilder(publicListener.Scheme, host, publicListener.Port);
        if (!string.IsNullOrEmpty(ownHost))
        {
            url.Host = ownHost.TrimEnd('.');
            url.Path = "/";
        }
        else if (!string.IsNullOrEmpty(hostSuffix))
        {
            url.Host = $"{session}.{hostSuffix.TrimStart('.')}";
            url.Path = "/";
        }
        else
        {
            url.Path = $"/session/{session}/";
        }

        return url.Uri.ToString();
    }

    private static bool IsWildcard(Uri listener) =>
        IPAddress.TryParse(listener.Host.Trim('[', ']'), out IPAddress? address) && (address.Equals(IPAddress.Any) || address.Equals(IPAddress.IPv6Any));

    /// <summary>The host part of a Host header (<c>name:port</c>, <c>[v6]:port</c>), or null when there is none.</summary>
    private static string? HostOf(string? hostHeader) =>
        !string.IsNullOrWhiteSpace(hostHeader) && Uri.TryCreate($"http://{hostHeader.Trim()}/", UriKind.Absolute, out Uri? parsed) ? parsed.Host : null;
}
