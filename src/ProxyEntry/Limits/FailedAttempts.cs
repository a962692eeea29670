using System.Net;
using System.Threading.RateLimiting;

namespace Tunnel2.ProxyEntry.Limits;

/// <summary>
/// Failed attempts per source address (wrong tokens on the tunnel port, wrong visitor credentials on the public port):
/// a token bucket of <c>perMinute</c>, a sixth refilled every 10 s. Once an address has used it up it is blocked,
/// whatever it sends, until the bucket refills, so guessing costs time. The limiter is
/// <c>System.Threading.RateLimiting</c>'s; buckets of idle addresses are dropped by it once full again.
/// </summary>
public sealed class FailedAttempts(int perMinute) : IDisposable
{
    private readonly PartitionedRateLimiter<IPAddress> _failures = PartitionedRateLimiter.Create<IPAddress, IPAddress>(address =>
        RateLimitPartition.GetTokenBucketLimiter(address, _ => new TokenBucketRateLimiterOptions
        {
            TokenLimit = perMinute,
            TokensPerPeriod = Math.Max(1, perMinute / 6),
            ReplenishmentPeriod = TimeSpan.FromSeconds(10),
            QueueLimit = 0,
            AutoReplenishment = true,
        }));

    /// <summary>Whether <paramref name="address"/> has used up its failed attempts; then when to try again.</summary>
    public bool IsBlocked(IPAddress address, out TimeSpan retryAfter)
    {
        using RateLimitLease probe = _failures.AttemptAcquire(address, permitCount: 0);
        retryAfter = probe.TryGetMetadata(MetadataName.RetryAfter, out TimeSpan wait) ? wait : TimeSpan.FromSeconds(10);
        return !probe.IsAcquired;
    }

    /// <summary>Counts an attempt from <paramref name="address"/>; false when it had none left (then nothing is counted).</summary>
    public bool TryCount(IPAddress address)
    {
        using RateLimitLease lease = _failures.AttemptAcquire(address, permitCount: 1);
        return lease.IsAcquired;
    }

    public void Dispose() => _failures.Dispose();
}
