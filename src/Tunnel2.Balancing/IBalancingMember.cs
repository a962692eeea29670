namespace Tunnel2.Balancing;

/// <summary>
/// One of the places a request may go, as the strategies see it: the clients of a session on the server, the backends
/// behind one client.
/// </summary>
public interface IBalancingMember
{
    /// <summary>Its share under <see cref="BalancingStrategy.Weighted"/>.</summary>
    int Weight { get; }

    /// <summary>Requests it has in flight now: what least-requests compares.</summary>
    int Outstanding { get; }

    /// <summary>A stable hash of its identity, scored by rendezvous hashing.</summary>
    ulong KeyHash { get; }

    /// <summary>What an affinity cookie holds to name it (derived from <see cref="KeyHash"/>, revealing nothing).</summary>
    string AffinityKey { get; }

    /// <summary>May take a new request now (a <see cref="TimeProvider"/> timestamp): healthy, not ejected, not full.</summary>
    bool CanTake(long now);
}
