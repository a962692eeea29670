using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>The resolved choice for one session: its strategy and affinity policy with the defaults filled in.</summary>
public sealed record BalancingPolicy(BalancingStrategy Strategy, IAffinityPolicy AffinityPolicy)
{
    public static readonly BalancingPolicy Default = new(BalancingStrategy.RoundRobin, AffinityMode.None, null, BalancingOptions.DefaultAffinityCookie);

    /// <param name="affinityHeader">The header <see cref="AffinityMode.Header"/> hashes.</param>
    /// <param name="affinityCookie">The cookie's name under <see cref="AffinityMode.Cookie"/>.</param>
    public BalancingPolicy(BalancingStrategy strategy, AffinityMode affinity, string? affinityHeader, string affinityCookie)
        : this(strategy, Tunnel2.Balancing.Affinity.AffinityPolicy.For(affinity, affinityHeader, affinityCookie))
    {
    }

    public AffinityMode Affinity => AffinityPolicy.Mode;

    /// <summary>The header <see cref="AffinityMode.Header"/> hashes; null under another mode.</summary>
    public string? AffinityHeader => (AffinityPolicy as HeaderAffinity)?.HeaderName;
}
