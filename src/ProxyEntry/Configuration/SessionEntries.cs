using Tunnel2.Protocol.Handshake;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Configuration;

/// <summary>The start's check of <c>ProxyEntry:Sessions</c>, each entry over the defaults it leaves in place.</summary>
public static class SessionEntries
{
    /// <summary>What is wrong with <c>ProxyEntry:Sessions</c>, one line each naming the key (the annotations check each value alone).</summary>
    public static IEnumerable<string> Problems(BalancingOptions balancing, IReadOnlyDictionary<string, SessionOptions> sessions)
    {
        foreach ((string session, SessionOptions own) in sessions)
        {
            if (!HandshakeProtocol.IsValidSessionId(session))
            {
                yield return $"ProxyEntry:Sessions:{session}: '{session}' is not a session id (1 to 128 characters of A-Z a-z 0-9 - _ . ~).";
                continue;
            }

            if ((own.Affinity ?? balancing.Affinity) == Tunnel2.Balancing.AffinityMode.Header && string.IsNullOrWhiteSpace(own.AffinityHeader ?? balancing.AffinityHeader))
            {
                yield return $"ProxyEntry:Sessions:{session}:Affinity is Header but no AffinityHeader is set.";
            }

            if (own.RateLimit is { } limit && (limit.PerSecond is < 0 or > 10_000_000 || limit.Burst is < 0 or > 100_000_000))
            {
                yield return $"ProxyEntry:Sessions:{session}:RateLimit: PerSecond must be 0 to 10000000 and Burst 0 to 100000000.";
            }

            if (own.MaxTcpConnections is < 1 or > 1_000_000)
            {
                yield return $"ProxyEntry:Sessions:{session}:MaxTcpConnections must be 1 to 1000000, not {own.MaxTcpConnections}.";
            }

            foreach (string host in own.Hosts ?? [])
            {
                if (!HostRouter.IsHostName(host))
                {
                    yield return $"ProxyEntry:Sessions:{session}:Hosts: '{host}' is not a host name.";
                }
            }
        }
    }

    /// <summary>A host name claimed for two sessions (by <c>Routing:Hosts</c> and the sessions' <c>Hosts</c>), one line each.</summary>
    public static IEnumerable<string> HostClaims(RoutingOptions routing, IReadOnlyDictionary<string, SessionOptions> sessions)
    {
        var problems = new List<string>();
        Hosts(routing, sessions, problems);
        return problems;
    }

    /// <summary>
    /// Every custom domain, host name → session: <c>ProxyEntry:Routing:Hosts</c> and each session's own <c>Hosts</c>
    /// (compared without case and a final dot). A host claimed for two sessions keeps its first claim here and is listed
    /// in <paramref name="problems"/>, which the start's check turns into its refusal.
    /// </summary>
    public static Dictionary<string, string> Hosts(RoutingOptions routing, IReadOnlyDictionary<string, SessionOptions> sessions, List<string>? problems = null)
    {
        var hosts = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        var claimedBy = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach ((string host, string session) in routing.Hosts)
        {
            Claim(host, session, $"ProxyEntry:Routing:Hosts:{host}");
        }

        foreach ((string session, SessionOptions own) in sessions.OrderBy(static entry => entry.Key, StringComparer.Ordinal))
        {
            foreach (string host in own.Hosts ?? [])
            {
                Claim(host, session, $"ProxyEntry:Sessions:{session}:Hosts");
            }
        }

        return hosts;

        void Claim(string host, string session, string key)
        {
            string name = host.TrimEnd('.');
            if (!hosts.TryGetValue(name, out string? claimed))
            {
                hosts[name] = session;
                claimedBy[name] = key;
            }
            else if (!string.Equals(claimed, session, StringComparison.Ordinal))
            {
                problems?.Add($"{key}: host '{name}' is already claimed for session '{claimed}' by {claimedBy[name]}; a host reaches one session.");
            }
        }
    }
}
