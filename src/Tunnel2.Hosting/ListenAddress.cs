using System.Diagnostics.CodeAnalysis;
using System.Net;

namespace Tunnel2.Hosting;

/// <summary>
/// Parses <c>http://host:port</c> or <c>https://host:port</c> into what a listener binds: an IP (or any/localhost), a
/// port (0 = pick one), and whether it speaks TLS.
/// </summary>
public sealed record ListenAddress(IPAddress? Address, bool IsLocalhost, int Port, bool IsHttps = false)
{
    /// <summary>What a socket binds: <c>localhost</c> means the IPv4 loopback.</summary>
    public IPEndPoint EndPoint => new(IsLocalhost ? IPAddress.Loopback : Address!, Port);

    public static bool TryParse(string? url, [NotNullWhen(true)] out ListenAddress? address, [NotNullWhen(false)] out string? error)
    {
        address = null;
        if (!HttpUrl.TryParse(url?.Replace("://*:", "://0.0.0.0:", StringComparison.Ordinal).Replace("://+:", "://0.0.0.0:", StringComparison.Ordinal), out Uri? uri))
        {
            error = $"must be an http:// or https:// URL such as http://127.0.0.1:12000, not '{url}'.";
            return false;
        }

        if (uri.AbsolutePath != "/")
        {
            error = $"must not have a path ('{url}').";
            return false;
        }

        bool https = uri.Scheme == Uri.UriSchemeHttps;
        if (uri.IsLoopback && uri.Host.Equals("localhost", StringComparison.OrdinalIgnoreCase))
        {
            address = new ListenAddress(null, true, uri.Port, https);
        }
        else if (IPAddress.TryParse(uri.Host.Trim('[', ']'), out IPAddress? ip))
        {
            address = new ListenAddress(ip, false, uri.Port, https);
        }
        else
        {
            error = $"must name an IP address or localhost, not '{uri.Host}'.";
            return false;
        }

        error = null;
        return true;
    }
}
