namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>What a request brings to the pick besides its session.</summary>
/// <param name="AffinityKey">
/// Cookie affinity: the cookie's value; header or client-IP affinity: the value to hash. Null when the request has none.
/// </param>
/// <param name="Exclude">A member not to pick: the one a retried request already failed on.</param>
public readonly record struct PickContext(string? AffinityKey = null, SessionMember? Exclude = null)
{
    public static PickContext None => default;
}
