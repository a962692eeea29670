using System.ComponentModel.DataAnnotations;
using System.Threading.RateLimiting;

namespace Tunnel2.ProxyEntry.Limits;

/// <summary>A token bucket: <see cref="PerSecond"/> requests a second on average, up to <see cref="Burst"/> at once. 0 per second: no limit.</summary>
public sealed class TokenBucketLimit
{
    /// <summary>Requests a second on average; beyond them 429 problem+json with Retry-After. 0: no limit.</summary>
    [Range(0, 10_000_000)]
    public int PerSecond { get; set; }

    /// <summary>The bucket's size: requests that may come at once after a quiet spell. 0: the same as <see cref="PerSecond"/>.</summary>
    [Range(0, 100_000_000)]
    public int Burst { get; set; }

    public bool IsOn => PerSecond > 0;

    /// <summary>
    /// Refilled every 100 ms, so a bucket drained by a burst recovers smoothly; every second when the rate is not a
    /// multiple of 10, so that it is exactly the rate asked for.
    /// </summary>
    public TokenBucketRateLimiterOptions ToLimiterOptions()
    {
        bool fine = PerSecond % 10 == 0;
        return new TokenBucketRateLimiterOptions
        {
            TokenLimit = Burst > 0 ? Burst : PerSecond,
            TokensPerPeriod = fine ? PerSecond / 10 : PerSecond,
            ReplenishmentPeriod = fine ? TimeSpan.FromMilliseconds(100) : TimeSpan.FromSeconds(1),
            QueueLimit = 0,
            AutoReplenishment = true,
        };
    }
}
