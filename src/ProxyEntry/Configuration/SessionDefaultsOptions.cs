using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Configuration;

/// <summary>
/// What every session gets unless its own entry (<c>ProxyEntry:Sessions:{id}</c>) says otherwise (section
/// <c>ProxyEntry:SessionDefaults</c>). The balancing defaults stay in <c>ProxyEntry:Balancing</c>.
/// </summary>
public sealed class SessionDefaultsOptions
{
    /// <summary>One token bucket per session for its public requests; beyond it, 429 problem+json with Retry-After.</summary>
    [ValidateObjectMembers]
    public TokenBucketLimit RateLimit { get; set; } = new() { PerSecond = 1000, Burst = 2000 };

    /// <summary>TCP connections open at once per session; beyond that a new caller is closed at once.</summary>
    [Range(1, 1_000_000)]
    public int MaxTcpConnections { get; set; } = 1000;
}
