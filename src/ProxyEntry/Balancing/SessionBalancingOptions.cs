using Tunnel2.Balancing;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>One session's own choices (<c>ProxyEntry:Balancing:Sessions:{id}</c>); what it leaves unset comes from the defaults.</summary>
public sealed class SessionBalancingOptions
{
    public BalancingStrategy? Strategy { get; set; }

    public AffinityMode? Affinity { get; set; }

    public string? AffinityHeader { get; set; }
}
