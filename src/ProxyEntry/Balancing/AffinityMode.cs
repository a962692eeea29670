namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>What keeps a caller on the same client; the strategy decides when there is no such key or its client is gone.</summary>
public enum AffinityMode
{
    None,

    /// <summary>
    /// A cookie (<see cref="BalancingOptions.AffinityCookie"/>) names the client; a caller without it, or whose client is
    /// gone or unready, is placed by the strategy and given the cookie.
    /// </summary>
    Cookie,

    /// <summary>A consistent (rendezvous) hash of a request header's value (<see cref="BalancingOptions.AffinityHeader"/>).</summary>
    Header,

    /// <summary>A consistent (rendezvous) hash of the caller's IP address as the server sees it.</summary>
    ClientIp,
}
