using System.Threading.RateLimiting;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Policy;

/// <summary>
/// Everything the operator decided for one session, in one place (the analogue of YARP's <c>ClusterConfig</c>): its
/// balancing, its HTTP rate limit and its cap on TCP connections. Built once per session from the options by
/// <c>Sessions/SessionPolicies</c> and shared by every request and connection of the session, so reading it costs
/// nothing on the hot path. Both doors read it: the rate limiter and the balancing for HTTP, the TCP port's admission.
/// The visitor rules, which change while the server runs (the credentials file is reloaded, a client declares its own
/// at login), are resolved next to it by <c>VisitorAccess</c> in the same order (docs/configuration.md, "One session's
/// settings").
/// </summary>
public sealed class SessionPolicy
{
    public SessionPolicy(BalancingPolicy balancing, TokenBucketLimit rateLimit, int maxTcpConnections)
    {
        Balancing = balancing;
        RateLimit = rateLimit;
        MaxTcpConnections = maxTcpConnections;
        RateLimiter = rateLimit.IsOn ? rateLimit.ToLimiterOptions() : null;
    }

    /// <summary>The session's strategy and affinity.</summary>
    public BalancingPolicy Balancing { get; }

    /// <summary>The session's token bucket for public HTTP requests.</summary>
    public TokenBucketLimit RateLimit { get; }

    /// <summary><see cref="RateLimit"/> as the limiter's options, made once; null when the session has no rate limit.</summary>
    public TokenBucketRateLimiterOptions? RateLimiter { get; }

    /// <summary>TCP connections open at once on the session's public port; a caller beyond them is reset at once.</summary>
    public int MaxTcpConnections { get; }
}
