using Tunnel2.Protocol.Handshake;
using Tunnel2.ProxyEntry.Balancing;

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
        }
    }
}
