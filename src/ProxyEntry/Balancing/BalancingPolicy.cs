using Tunnel2.Protocol.Balancing;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>The resolved choice for one session: its strategy and affinity with the defaults filled in.</summary>
public sealed record BalancingPolicy(BalancingStrategy Strategy, AffinityMode Affinity, string? AffinityHeader, string AffinityCookie)
{
    public static readonly BalancingPolicy Default = new(BalancingStrategy.RoundRobin, AffinityMode.None, null, BalancingOptions.DefaultAffinityCookie);
}
