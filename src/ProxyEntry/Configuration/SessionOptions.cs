using Tunnel2.Balancing;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Configuration;

/// <summary>
/// One session's own settings (<c>ProxyEntry:Sessions:{id}</c>); what it leaves unset comes from
/// <c>ProxyEntry:SessionDefaults</c> and <c>ProxyEntry:Balancing</c>. Resolved once into its session policy (<c>Policy/SessionPolicy</c>).
/// </summary>
public sealed class SessionOptions
{
    /// <summary>How the session's requests spread over its clients.</summary>
    public BalancingStrategy? Strategy { get; set; }

    /// <summary>What keeps a caller of the session on one client.</summary>
    public AffinityMode? Affinity { get; set; }

    /// <summary>The header hashed when <see cref="Affinity"/> is <c>Header</c>.</summary>
    public string? AffinityHeader { get; set; }

    /// <summary>The session's token bucket for public requests, in place of <c>ProxyEntry:SessionDefaults:RateLimit</c>.</summary>
    public TokenBucketLimit? RateLimit { get; set; }

    /// <summary>TCP connections open at once on the session's port, in place of <c>ProxyEntry:SessionDefaults:MaxTcpConnections</c>.</summary>
    public int? MaxTcpConnections { get; set; }

    /// <summary>
    /// The session's custom domains, e.g. <c>Sessions:{id}:Hosts:0=app.example.org</c>: each reaches the session with
    /// its path unchanged, as a <c>ProxyEntry:Routing:Hosts</c> entry naming it does (both are read; a host claimed for
    /// two sessions stops the server at start).
    /// </summary>
    public List<string>? Hosts { get; set; }

    /// <summary>
    /// Whether <c>/session/{id}/…</c> reaches the session (default true). False: only its host names do (its
    /// <see cref="Hosts"/>, <c>Routing:Hosts</c>, <c>{id}.{HostSuffix}</c>), and such a path gets the same 404 as a
    /// session nobody serves.
    /// </summary>
    public bool? PathRouting { get; set; }
}
