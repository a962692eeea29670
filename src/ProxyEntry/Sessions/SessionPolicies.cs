using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Policy;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>
/// Every session's <see cref="SessionPolicy"/>, the one object both doors read. The options' part is resolved once at
/// start: a setting comes from the session's entry in <c>ProxyEntry:Sessions</c> when it names it, else from
/// <c>ProxyEntry:SessionDefaults</c> (limits) or <c>ProxyEntry:Balancing</c> (strategy, affinity). The visitor rules
/// come on top, from the credentials file (<see cref="UseFileRules"/>, at start and on each reload) and from what a
/// client declares at login (<see cref="Declare"/>).
/// <para>
/// Each change builds a new <see cref="PolicyTable"/> (copy-on-write, under a lock only writers take) and publishes it
/// with one volatile write; <see cref="For(string)"/> reads the table once, with no lock and no allocation, so a request
/// sees one consistent snapshot of its session.
/// </para>
/// </summary>
public sealed class SessionPolicies
{
    private readonly Lock _writing = new();
    private readonly Dictionary<string, SessionPolicy> _options = new(StringComparer.Ordinal);
    private readonly SessionPolicy _defaultOptions;
    private VisitorPolicies _file = VisitorPolicies.None;
    private Dictionary<string, VisitorPolicy> _declared = new(StringComparer.Ordinal);
    private PolicyTable _table;

    public SessionPolicies()
        : this(new BalancingOptions(), new SessionDefaultsOptions(), new Dictionary<string, SessionOptions>())
    {
    }

    public SessionPolicies(BalancingOptions balancing, SessionDefaultsOptions defaults, IReadOnlyDictionary<string, SessionOptions> sessions)
    {
        _defaultOptions = new SessionPolicy(balancing.DefaultPolicy(), defaults.RateLimit, defaults.MaxTcpConnections);
        foreach ((string session, SessionOptions own) in sessions)
        {
            _options[session] = Resolve(balancing, defaults, own);
        }

        AnyRateLimit = _defaultOptions.RateLimiter is not null || _options.Values.Any(policy => policy.RateLimiter is not null);
        _table = PolicyTable.Build(_defaultOptions, _options, _file, _declared);
    }

    /// <summary>Whether any session has an HTTP rate limit (else the rate limiter is not even in the pipeline).</summary>
    public bool AnyRateLimit { get; }

    /// <summary>The policy of a session with no entry of its own and no visitor rules.</summary>
    public SessionPolicy Default => _defaultOptions;

    /// <summary>The session's policy now: one volatile read of the current table, then one dictionary read.</summary>
    public SessionPolicy For(string session) => Volatile.Read(ref _table).For(session);

    /// <summary>
    /// The credentials file's visitor entries, at start and after each reload that parsed: every session's policy is
    /// rebuilt with them, its declared rules kept.
    /// </summary>
    public void UseFileRules(VisitorPolicies file)
    {
        lock (_writing)
        {
            _file = file;
            Publish();
        }
    }

    /// <summary>
    /// The rules a client of <paramref name="session"/> declared at its login; null clears them. The latest login of the
    /// session decides (all uplinks of one client declare the same).
    /// </summary>
    public void Declare(string session, VisitorPolicy? policy)
    {
        lock (_writing)
        {
            if (policy is null && !_declared.ContainsKey(session))
            {
                return; // nothing declared before, nothing to clear: most logins, and no new table
            }

            var declared = new Dictionary<string, VisitorPolicy>(_declared, StringComparer.Ordinal);
            if (policy is null)
            {
                declared.Remove(session);
            }
            else
            {
                declared[session] = policy;
            }

            _declared = declared;
            Publish();
        }
    }

    /// <summary>The session's own entry over the defaults, key by key.</summary>
    public static SessionPolicy Resolve(BalancingOptions balancing, SessionDefaultsOptions defaults, SessionOptions own) => new(
        new BalancingPolicy(own.Strategy ?? balancing.Strategy, own.Affinity ?? balancing.Affinity, own.AffinityHeader ?? balancing.AffinityHeader,
            balancing.AffinityCookie),
        own.RateLimit ?? defaults.RateLimit,
        own.MaxTcpConnections ?? defaults.MaxTcpConnections,
        own.Hosts is { Count: > 0 } hosts ? [.. hosts] : [],
        own.PathRouting ?? true);

    private void Publish() => Volatile.Write(ref _table, PolicyTable.Build(_defaultOptions, _options, _file, _declared));
}
