using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;

namespace Tunnel2.ProxyEntry.Limits;

/// <summary>
/// Public rate limits (section <c>ProxyEntry:RateLimits</c>), token buckets from <c>System.Threading.RateLimiting</c>
/// applied by ASP.NET Core's rate-limiting middleware before a request reaches a session: one per session (its
/// <c>SessionPolicy</c>: <c>ProxyEntry:SessionDefaults:RateLimit</c> or the session's own), one per
/// visitor address (an IPv6 visitor by its /64, what one host usually holds). Beyond them: 429 problem+json with
/// Retry-After. The defaults suit a shared server; the Development environment turns them off (load tests send tens of
/// thousands of requests a second from one address to one session).
/// </summary>
public sealed class RateLimitOptions
{
    /// <summary>One token bucket per visitor address (an IPv6 visitor by its /64).</summary>
    [ValidateObjectMembers]
    public TokenBucketLimit PerVisitor { get; set; } = new() { PerSecond = 100, Burst = 200 };

    /// <summary>
    /// Password checks (of passwords not verified before) and wrong API keys one visitor address may cost per minute;
    /// beyond them it gets 429, right credentials included, until a count has refilled (one every 60/N seconds), and no
    /// password is checked: bcrypt's cost is not theirs to spend. A password takes its count before bcrypt runs (given
    /// back when it was right), so concurrent guesses cannot outrun it.
    /// </summary>
    [Range(1, 100_000)]
    public int FailedVisitorLoginsPerMinute { get; set; } = 20;
}
