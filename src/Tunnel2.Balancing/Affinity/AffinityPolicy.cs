namespace Tunnel2.Balancing.Affinity;

/// <summary>The policy for a configured <see cref="AffinityMode"/>: the one place a mode becomes behaviour.</summary>
public static class AffinityPolicy
{
    /// <param name="header">The header <see cref="AffinityMode.Header"/> hashes (validation requires one with it).</param>
    /// <param name="cookie">The cookie's name under <see cref="AffinityMode.Cookie"/>.</param>
    public static IAffinityPolicy For(AffinityMode mode, string? header, string cookie) => mode switch
    {
        AffinityMode.Cookie => new CookieAffinity(cookie),
        AffinityMode.Header => new HeaderAffinity(header ?? string.Empty),
        AffinityMode.ClientIp => ClientAddressAffinity.Instance,
        _ => NoAffinity.Instance,
    };
}
