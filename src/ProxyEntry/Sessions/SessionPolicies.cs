using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Policy;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>
/// Every session's <see cref="SessionPolicy"/>, resolved once at start: one for each session that has an entry in
/// <c>ProxyEntry:Sessions</c>, and one shared by all the others. A setting comes from the session's own entry when it
/// names it, else from <c>ProxyEntry:SessionDefaults</c> (limits) or <c>ProxyEntry:Balancing</c> (strategy, affinity).
/// A lookup is one dictionary read, and none when no session has an entry.
/// </summary>
public sealed class SessionPolicies
{
    private readonly Dictionary<string, SessionPolicy> _own = new(StringComparer.Ordinal);
    private readonly Dictionary<string, SessionPolicy>.AlternateLookup<ReadOnlySpan<char>> _bySpan;

    public SessionPolicies()
        : this(new BalancingOptions(), new SessionDefaultsOptions(), new Dictionary<string, SessionOptions>())
    {
    }

    public SessionPolicies(BalancingOptions balancing, SessionDefaultsOptions defaults, IReadOnlyDictionary<string, SessionOptions> sessions)
    {
        Default = new SessionPolicy(balancing.DefaultPolicy(), defaults.RateLimit, defaults.MaxTcpConnections);
        foreach ((string session, SessionOptions own) in sessions)
        {
            _own[session] = Resolve(balancing, defaults, own);
        }

        _bySpan = _own.GetAlternateLookup<ReadOnlySpan<char>>();
        AnyRateLimit = Default.RateLimiter is not null || _own.Values.Any(policy => policy.RateLimiter is not null);
    }

    /// <summary>Whether any session has an HTTP rate limit (else the rate limiter is not even in the pipeline).</summary>
    public bool AnyRateLimit { get; }

    /// <summary>The policy of a session with no entry of its own.</summary>
    public SessionPolicy Default { get; }

    public SessionPolicy For(string session) => _own.Count > 0 && _own.TryGetValue(session, out SessionPolicy? own) ? own : Default;

    public SessionPolicy For(ReadOnlySpan<char> session) => _own.Count > 0 && _bySpan.TryGetValue(session, out SessionPolicy? own) ? own : Default;

    /// <summary>The session's own entry over the defaults, key by key.</summary>
    public static SessionPolicy Resolve(BalancingOptions balancing, SessionDefaultsOptions defaults, SessionOptions own) => new(
        new BalancingPolicy(own.Strategy ?? balancing.Strategy, own.Affinity ?? balancing.Affinity, own.AffinityHeader ?? balancing.AffinityHeader,
            balancing.AffinityCookie),
        own.RateLimit ?? defaults.RateLimit,
        own.MaxTcpConnections ?? defaults.MaxTcpConnections);
}
