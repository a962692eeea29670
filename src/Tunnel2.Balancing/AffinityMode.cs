namespace Tunnel2.Balancing;

/// <summary>
/// What keeps a caller on the same member (a client of a session, a backend of a client); the strategy decides when the
/// request has no such key or its member cannot take it. Each is a policy (<see cref="Affinity.AffinityPolicy.For"/>).
/// </summary>
public enum AffinityMode
{
    None,

    /// <summary>
    /// A cookie names the member; a caller without it, or whose member is gone or unready, is placed by the strategy and
    /// given the cookie.
    /// </summary>
    Cookie,

    /// <summary>A consistent (rendezvous) hash of a request header's value.</summary>
    Header,

    /// <summary>A consistent (rendezvous) hash of the caller's IP address as the server sees it.</summary>
    ClientIp,
}
