namespace Tunnel2.Hosting.Admin;

/// <summary>The admin listener's settings as both executables take them (<c>--admin-url</c>, <c>--admin-token</c>).</summary>
public static class AdminSettings
{
    public const int MinimumTokenLength = 16;

    /// <summary>What is wrong with an admin URL and token, named under <paramref name="section"/> (e.g. TunnelServer).</summary>
    public static IEnumerable<string> Problems(string section, string? adminUrl, string? adminToken)
    {
        if (string.IsNullOrEmpty(adminUrl))
        {
            if (!string.IsNullOrEmpty(adminToken))
            {
                yield return $"{section}:AdminToken is set but no admin listener is: set {section}:AdminUrl (--admin-url) too.";
            }

            yield break;
        }

        if (!ListenAddress.TryParse(adminUrl, out ListenAddress? address, out string? error))
        {
            yield return $"{section}:AdminUrl {error}";
            yield break;
        }

        if (address.IsHttps)
        {
            yield return $"{section}:AdminUrl must be http://: the admin listener has no TLS of its own (keep it on loopback, or put it behind a proxy that has).";
        }

        if (!string.IsNullOrEmpty(adminToken) && adminToken.Length < MinimumTokenLength)
        {
            yield return $"{section}:AdminToken must be at least {MinimumTokenLength} characters.";
        }
        else if (string.IsNullOrEmpty(adminToken) && !IsLoopback(address))
        {
            yield return $"{section}:AdminUrl {adminUrl} is reachable from other machines: set {section}:AdminToken (--admin-token), or listen on 127.0.0.1.";
        }
    }

    public static bool IsLoopback(ListenAddress address) => address.IsLocalhost || (address.Address is { } ip && System.Net.IPAddress.IsLoopback(ip));
}
