using System.Threading.RateLimiting;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Policy;

/// <summary>
/// Everything decided for one session, in one place (the analogue of YARP's <c>ClusterConfig</c>): its balancing, its
/// HTTP rate limit, its cap on TCP connections, how it is reached (its host names, whether <c>/session/{id}/</c> reaches
/// it) and its visitor rules. Both doors read it, once per request (the route step) or per connection (the TCP port):
/// the rate limiter, the access step and the balancing for HTTP, the admission for TCP.
/// <para>
/// Immutable, a snapshot. The options' part is resolved once at start; the visitor rules change while the server runs
/// (the credentials file is reloaded, a client declares rules at login or logs in without), and then
/// <c>Sessions/SessionPolicies</c> builds a new policy with <see cref="WithVisitors"/> and swaps it in whole: a request
/// or connection sees the rules before a change or after it, never half of one, and reading it costs no lock and no
/// allocation. The order its parts come from is docs/configuration.md, "One session's settings".
/// </para>
/// </summary>
public sealed class SessionPolicy
{
    public SessionPolicy(BalancingPolicy balancing, TokenBucketLimit rateLimit, int maxTcpConnections)
        : this(balancing, rateLimit, maxTcpConnections, hosts: [], pathRouting: true)
    {
    }

    public SessionPolicy(BalancingPolicy balancing, TokenBucketLimit rateLimit, int maxTcpConnections, IReadOnlyList<string> hosts, bool pathRouting)
    {
        Balancing = balancing;
        RateLimit = rateLimit;
        MaxTcpConnections = maxTcpConnections;
        RateLimiter = rateLimit.IsOn ? rateLimit.ToLimiterOptions() : null;
        Hosts = hosts;
        PathRouting = pathRouting;
        Visitors = SessionVisitorRules.None;
    }

    private SessionPolicy(SessionPolicy options, SessionVisitorRules visitors)
    {
        Balancing = options.Balancing;
        RateLimit = options.RateLimit;
        MaxTcpConnections = options.MaxTcpConnections;
        RateLimiter = options.RateLimiter;
        Hosts = options.Hosts;
        PathRouting = options.PathRouting;
        Visitors = visitors;
    }

    /// <summary>The session's strategy and affinity.</summary>
    public BalancingPolicy Balancing { get; }

    /// <summary>The session's token bucket for public HTTP requests.</summary>
    public TokenBucketLimit RateLimit { get; }

    /// <summary><see cref="RateLimit"/> as the limiter's options, made once; null when the session has no rate limit.</summary>
    public TokenBucketRateLimiterOptions? RateLimiter { get; }

    /// <summary>TCP connections open at once on the session's public port; a caller beyond them is reset at once.</summary>
    public int MaxTcpConnections { get; }

    /// <summary>The session's own host names (<c>ProxyEntry:Sessions:{id}:Hosts</c>), routed to it as <c>Routing:Hosts</c> are.</summary>
    public IReadOnlyList<string> Hosts { get; }

    /// <summary>
    /// Whether <c>/session/{id}/…</c> reaches the session; false: only its host names do, and such a path gets the
    /// 404 of a session nobody serves.
    /// </summary>
    public bool PathRouting { get; }

    /// <summary>The session's visitor rules now: the credentials file's entry, then what its client declared.</summary>
    public SessionVisitorRules Visitors { get; }

    /// <summary>This policy with other visitor rules (everything else shared, the rate limiter's options included).</summary>
    public SessionPolicy WithVisitors(SessionVisitorRules visitors) =>
        ReferenceEquals(visitors, Visitors) ? this : new SessionPolicy(this, visitors);
}
