using System.ComponentModel.DataAnnotations;
using System.Net;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Hosting.Configuration;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Configuration;

/// <summary>
/// What public requests meet on their way to a session (section <c>ProxyEntry</c>): routing, limits, balancing over a
/// session's clients, rate limits, trusted proxies. The server process itself (listeners, TLS, uplinks) is configured
/// in the <c>TunnelServer</c> section.
/// </summary>
public sealed class ProxyEntryOptions
{
    public const string SectionName = "ProxyEntry";

    /// <summary>Limits on one public request's head and body.</summary>
    [ValidateObjectMembers]
    public RequestLimitsOptions Limits { get; set; } = new();

    /// <summary>Which session a public request's host name reaches, besides <c>/session/{id}/…</c> paths (docs/running.md, "Host names").</summary>
    public RoutingOptions Routing { get; set; } = new();

    /// <summary>
    /// Sessions that get a <c>tunnel2.session</c> label of their own in per-session metrics (the first ones seen); the
    /// rest share one, <c>_other</c>.
    /// </summary>
    [Range(0, 100_000)]
    public int MetricsSessionLimit { get; set; } = 100;

    /// <summary>
    /// A node among several behind a balancer: for this long after it starts, <c>/healthz</c> answers 503 and a session
    /// without a client here answers 503 (with Retry-After) instead of 404, since its clients may not have reconnected
    /// yet. At least the clients' longest reconnect delay (<c>TunnelClient:Uplink:ReconnectMaxDelay</c>) that a restart
    /// should cover. Zero (the default, for a single server): no warm-up.
    /// </summary>
    [TimeSpanRange("00:00:00", "00:10:00")]
    public TimeSpan WarmUp { get; set; }

    /// <summary>Value of <c>Retry-After</c> (seconds) on 503 answers.</summary>
    [Range(1, 3600)]
    public int RetryAfterSeconds { get; set; } = 1;

    /// <summary>How requests spread over the clients of a session (section <c>ProxyEntry:Balancing</c>).</summary>
    [ValidateObjectMembers]
    public BalancingOptions Balancing { get; set; } = new();

    /// <summary>What every session gets unless its own entry in <c>ProxyEntry:Sessions</c> says otherwise (section <c>ProxyEntry:SessionDefaults</c>).</summary>
    [ValidateObjectMembers]
    public SessionDefaultsOptions SessionDefaults { get; set; } = new();

    /// <summary>
    /// One session's own settings, by session id, e.g. <c>Sessions:&lt;id&gt;:MaxTcpConnections</c>: <c>Strategy</c>,
    /// <c>Affinity</c>, <c>AffinityHeader</c>, <c>RateLimit:PerSecond</c>, <c>RateLimit:Burst</c>,
    /// <c>MaxTcpConnections</c>, <c>Hosts:0</c>… (its custom domains, beside <c>Routing:Hosts</c>; a host claimed for
    /// two sessions stops the start) and <c>PathRouting</c> (default true; false: only its host names reach it, and
    /// <c>/session/&lt;id&gt;/</c> gets the 404 of a session nobody serves). What an entry leaves unset comes from
    /// <c>SessionDefaults</c> and <c>Balancing</c>.
    /// </summary>
    public Dictionary<string, SessionOptions> Sessions { get; set; } = new(StringComparer.Ordinal);

    /// <summary>Public rate limits per visitor address and on failed visitor logins (section <c>ProxyEntry:RateLimits</c>; per session: <c>SessionDefaults:RateLimit</c>).</summary>
    [ValidateObjectMembers]
    public RateLimitOptions RateLimits { get; set; } = new();

    /// <summary>
    /// Proxies in front of this server (CIDR, e.g. <c>10.0.0.0/8</c> or <c>127.0.0.1/32</c>) whose
    /// <c>X-Forwarded-For</c> and <c>X-Forwarded-Proto</c> are believed: a request from one of them counts as from the
    /// address it names (visitor rules, rate limits, logs, the backend's X-Forwarded-For) and as over https when it says
    /// so (a TLS edge: the login's redirect URI, Secure cookies, the backend's X-Forwarded-Proto). From anyone else the
    /// headers are ignored.
    /// </summary>
    public List<string> TrustedProxies { get; set; } = [];

    /// <summary>
    /// <see cref="TrustedProxies"/> read once for every user (forwarded headers, the uplink login's peer, the
    /// validator): the networks, and the entries that are none, which stop the start.
    /// </summary>
    public (List<IPNetwork> Networks, List<string> Invalid) ParseTrustedProxies()
    {
        List<IPNetwork> networks = [];
        List<string> invalid = [];
        foreach (string entry in TrustedProxies)
        {
            if (NetworkList.TryParseNetwork(entry, out IPNetwork network))
            {
                networks.Add(network);
            }
            else
            {
                invalid.Add(entry);
            }
        }

        return (networks, invalid);
    }
}
