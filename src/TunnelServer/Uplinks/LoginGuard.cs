using System.Collections.Concurrent;
using System.Net;
using System.Threading.RateLimiting;
using Microsoft.Extensions.Options;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// Limits what one source address may do on the tunnel port: failed logins (a token bucket per address of
/// <c>TunnelServer:MaxFailedLoginsPerMinute</c>, refilled over a minute; once empty every login from that address gets
/// 429 with Retry-After until it refills, right token or not, so guessing costs time) and uplinks open at once
/// (<c>TunnelServer:MaxUplinksPerAddress</c>). The limiter is ASP.NET Core's <c>System.Threading.RateLimiting</c>;
/// idle addresses' buckets are dropped by it once full again.
/// </summary>
public sealed class LoginGuard : IDisposable
{
    private readonly PartitionedRateLimiter<IPAddress> _failures;
    private readonly ConcurrentDictionary<IPAddress, int> _uplinks = new();
    private readonly int _maxUplinks;

    public LoginGuard(IOptions<TunnelServerOptions> options)
    {
        int perMinute = options.Value.MaxFailedLoginsPerMinute;
        _maxUplinks = options.Value.MaxUplinksPerAddress;
        _failures = PartitionedRateLimiter.Create<IPAddress, IPAddress>(address => RateLimitPartition.GetTokenBucketLimiter(address, _ =>
            new TokenBucketRateLimiterOptions
            {
                TokenLimit = perMinute,
                TokensPerPeriod = Math.Max(1, perMinute / 6),
                ReplenishmentPeriod = TimeSpan.FromSeconds(10),
                QueueLimit = 0,
                AutoReplenishment = true,
            }));
    }

    /// <summary>Whether <paramref name="address"/> has used up its failed logins; then when to try again.</summary>
    public bool IsBlocked(IPAddress address, out TimeSpan retryAfter)
    {
        using RateLimitLease probe = _failures.AttemptAcquire(address, permitCount: 0);
        retryAfter = probe.TryGetMetadata(MetadataName.RetryAfter, out TimeSpan wait) ? wait : TimeSpan.FromSeconds(10);
        return !probe.IsAcquired;
    }

    public void OnLoginFailed(IPAddress address) => _failures.AttemptAcquire(address, permitCount: 1).Dispose();

    /// <summary>Counts an uplink from <paramref name="address"/>; false (nothing counted) when it already has the most allowed.</summary>
    public bool TryAddUplink(IPAddress address)
    {
        while (true)
        {
            int current = _uplinks.GetOrAdd(address, 0);
            if (current >= _maxUplinks)
            {
                return false;
            }

            if (_uplinks.TryUpdate(address, current + 1, current))
            {
                return true;
            }
        }
    }

    public void RemoveUplink(IPAddress address)
    {
        while (_uplinks.TryGetValue(address, out int current))
        {
            if (current <= 1 ? _uplinks.TryRemove(new KeyValuePair<IPAddress, int>(address, current)) : _uplinks.TryUpdate(address, current - 1, current))
            {
                return;
            }
        }
    }

    public void Dispose() => _failures.Dispose();
}
