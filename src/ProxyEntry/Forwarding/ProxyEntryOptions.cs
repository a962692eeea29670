using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting.Configuration;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>How the public side forwards requests; bound from the <c>ProxyEntry</c> configuration section.</summary>
public sealed class ProxyEntryOptions
{
    public const string SectionName = "ProxyEntry";

    /// <summary>A request whose response head has not arrived by then gets 504.</summary>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan ResponseHeadTimeout { get; set; } = TimeSpan.FromSeconds(100);

    /// <summary>Largest request body forwarded, in bytes (413 beyond it); null means no limit, as for a tunnel of files.</summary>
    [Range(0, long.MaxValue)]
    public long? MaxRequestBodySize { get; set; }

    /// <summary>
    /// Largest request header block forwarded, in bytes (<c>name: value</c> plus CRLF per field); 431 beyond it. The
    /// server sets Kestrel's own limit on its listeners to twice this, so only heads far over it are cut by Kestrel.
    /// </summary>
    [Range(1024, 1024 * 1024)]
    public int MaxRequestHeadersBytes { get; set; } = DefaultMaxRequestHeadersBytes;

    public const int DefaultMaxRequestHeadersBytes = 32 * 1024;

    /// <summary>
    /// Sessions that get a <c>tunnel2.session</c> label of their own in per-session metrics (the first ones seen); the
    /// rest share one, <c>_other</c>.
    /// </summary>
    [Range(0, 100_000)]
    public int MetricsSessionLimit { get; set; } = 100;

    /// <summary>
    /// A node among several behind a balancer: for this long after it starts, <c>/healthz</c> answers 503 and a session
    /// without a client here answers 503 (with Retry-After) instead of 404, since its clients may not have reconnected
    /// yet. At least the clients' longest reconnect delay (<c>TunnelClient:ReconnectMaxDelay</c>) that a restart
    /// should cover. Zero (the default, for a single server): no warm-up.
    /// </summary>
    [TimeSpanRange("00:00:00", "00:10:00")]
    public TimeSpan WarmUp { get; set; }

    /// <summary>Value of <c>Retry-After</c> (seconds) on 503 answers.</summary>
    [Range(1, 3600)]
    public int RetryAfterSeconds { get; set; } = 1;

    /// <summary>
    /// Host routing: with <c>tunnel.example.com</c> here, a request for <c>Host: {session}.tunnel.example.com</c> goes to
    /// that session with its path unchanged (no <c>/session/{id}</c> prefix). Path routing keeps working beside it, on
    /// any other host. Null: no host routing by suffix.
    /// </summary>
    public string? HostSuffix { get; set; }

    /// <summary>Custom domains: host name → session id, e.g. <c>"app.example.org": "demo"</c>. Host routing as for <see cref="HostSuffix"/>.</summary>
    public Dictionary<string, string> Hosts { get; set; } = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>How requests spread over the clients of a session (section <c>ProxyEntry:Balancing</c>).</summary>
    [ValidateObjectMembers]
    public BalancingOptions Balancing { get; set; } = new();

    /// <summary>Public rate limits per session and per visitor address (section <c>ProxyEntry:RateLimits</c>).</summary>
    [ValidateObjectMembers]
    public RateLimitOptions RateLimits { get; set; } = new();

    /// <summary>
    /// Proxies in front of this server (CIDR, e.g. <c>10.0.0.0/8</c> or <c>127.0.0.1/32</c>) whose
    /// <c>X-Forwarded-For</c> is believed: a request from one of them counts as from the address it names (visitor
    /// rules, rate limits, logs, the backend's X-Forwarded-For). From anyone else the header is ignored.
    /// </summary>
    public List<string> TrustedProxies { get; set; } = [];
}
