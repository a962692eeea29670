using System.Diagnostics.CodeAnalysis;
using System.Net;
using Tunnel2.Hosting;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// Where a rule reads an identity provider's documents and keys (<see cref="JwtRule"/>, <see cref="OidcRule"/>): an
/// http(s) URL as <see cref="HttpUrl"/> reads one, over https, or plain http only to a loopback address (a provider on
/// the same host; nobody on the path can then swap the keys).
/// </summary>
internal static class ProviderAddress
{
    /// <summary>True when <paramref name="text"/> is such a URL.</summary>
    public static bool TryParse(string? text, [NotNullWhen(true)] out Uri? url) =>
        HttpUrl.TryParse(text, out url) && IsSafe(url);

    /// <summary>True for https, and for http to a loopback address.</summary>
    public static bool IsSafe(Uri url) => url.Scheme == Uri.UriSchemeHttps || IsLoopback(url);

    public static bool IsLoopback(Uri address) =>
        address.IsLoopback || (IPAddress.TryParse(address.Host.Trim('[', ']'), out IPAddress? ip) && IPAddress.IsLoopback(ip));
}
