using System.Net;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>How the addresses of a resolved server name changed since the last lookup.</summary>
public sealed record ServerAddressChange(IReadOnlyList<IPAddress> Added, IReadOnlyList<IPAddress> Removed)
{
    /// <summary>
    /// The nodes to open and to drain. An empty answer changes nothing: a lookup that finds no address at all is taken for
    /// a failure of DNS rather than a cluster with no nodes, so the uplinks that work are kept.
    /// </summary>
    public static ServerAddressChange Between(IEnumerable<IPAddress> current, IReadOnlyCollection<IPAddress> resolved)
    {
        var known = new HashSet<IPAddress>(current);
        if (resolved.Count == 0)
        {
            return new ServerAddressChange([], []);
        }

        var now = new HashSet<IPAddress>(resolved);
        var added = new List<IPAddress>();
        foreach (IPAddress address in resolved)
        {
            if (!known.Contains(address) && !added.Contains(address))
            {
                added.Add(address);
            }
        }

        var removed = new List<IPAddress>();
        foreach (IPAddress address in known)
        {
            if (!now.Contains(address))
            {
                removed.Add(address);
            }
        }

        return new ServerAddressChange(added, removed);
    }
}
