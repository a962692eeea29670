namespace Tunnel2.Hosting.Admin;

/// <summary>The admin listener's settings as both executables take them (<c>--admin-url</c>, <c>--admin-token</c>).</summary>
public static class AdminSettings
{
    public const int MinimumTokenLength = 16;

    /// <summary>What is wrong with an admin URL and token, named under <paramref name="section"/> (e.g. TunnelServer).</summary>
    public static IEnumerable<string> Problems(string section, string? adminUrl, string? adminToken) =>
        Problems(section, adminToken, ("Admin:Url", "--admin-url", adminUrl));

    /// <summary>
    /// What is wrong with the listeners the admin token guards (the client's admin listener and its request inspector):
    /// each URL, the token's length, a token with no listener, and a listener off loopback without a token.
    /// </summary>
    /// <param name="listeners">Each listener's setting name, switch and URL (null or empty: not listening).</param>
    public static IEnumerable<string> Problems(string section, string? adminToken, params (string Key, string Switch, string? Url)[] listeners)
    {
        bool anyListener = false;
        foreach ((string key, string option, string? url) in listeners)
        {
            if (string.IsNullOrEmpty(url))
            {
                continue;
            }

            anyListener = true;
            if (!ListenAddress.TryParse(url, out ListenAddress? address, out string? error))
            {
                yield return $"{section}:{key} {error}";
                continue;
            }

            if (address.IsHttps)
            {
                yield return $"{section}:{key} must be http://: the listener has no TLS of its own (keep it on loopback, or put it behind a proxy that has).";
            }

            if (string.IsNullOrEmpty(adminToken) && !IsLoopback(address))
            {
                yield return $"{section}:{key} {url} is reachable from other machines: set {section}:Admin:Token (--admin-token), or listen on 127.0.0.1.";
            }
        }

        if (string.IsNullOrEmpty(adminToken))
        {
            yield break;
        }

        if (!anyListener)
        {
            string names = string.Join(" or ", Array.ConvertAll(listeners, listener => $"{section}:{listener.Key} ({listener.Switch})"));
            yield return $"{section}:Admin:Token is set but no admin listener is: set {names} too.";
        }
        else if (adminToken.Length < MinimumTokenLength)
        {
            yield return $"{section}:Admin:Token must be at least {MinimumTokenLength} characters.";
        }
    }

    public static bool IsLoopback(ListenAddress address) => address.IsLocalhost || (address.Address is { } ip && System.Net.IPAddress.IsLoopback(ip));
}
