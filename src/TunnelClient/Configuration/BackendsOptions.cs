using System.ComponentModel.DataAnnotations;
using Tunnel2.Balancing;
using Tunnel2.Hosting.Configuration;
using Tunnel2.TunnelClient.Relay.Shaping;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The backends requests are relayed to, how they are spread over several, and what each request looks like on its way there (section <c>TunnelClient:Backends</c>; docs/running.md, "Several backends behind one client").</summary>
public sealed class BackendsOptions
{
    /// <summary>
    /// Base URL of the backend requests are relayed to, or several separated by commas (a repeated <c>--backend</c> is
    /// joined so), each optionally followed by <c>weight=N</c>: <c>http://127.0.0.1:8081, http://127.0.0.1:8082 weight=3</c>.
    /// Several are balanced by <see cref="Strategy"/> and <see cref="Affinity"/>.
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Backends:Urls is required (--backend).")]
    public string Urls { get; set; } = "http://127.0.0.1:12007";

    /// <summary>How requests spread over several backends (the key the server's balancing and TCP sections use too).</summary>
    public BalancingStrategy Strategy { get; set; } = BalancingStrategy.RoundRobin;

    /// <summary>What keeps a caller on one of several backends (the strategy places callers without it).</summary>
    public AffinityMode Affinity { get; set; } = AffinityMode.None;

    /// <summary>The header hashed when <see cref="Affinity"/> is <see cref="AffinityMode.Header"/>.</summary>
    public string? AffinityHeader { get; set; }

    /// <summary>The cookie that names a caller's backend when <see cref="Affinity"/> is <see cref="AffinityMode.Cookie"/>.</summary>
    [RegularExpression("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", ErrorMessage = "TunnelClient:Backends:AffinityCookie must be a cookie name (an RFC 9110 token).")]
    public string AffinityCookie { get; set; } = "Tunnel2-Backend";

    /// <summary>
    /// The <c>Host</c> the backend is sent: <c>preserve</c>, the caller's (as ngrok, frp and cloudflared pass it), so apps
    /// that compare <c>Origin</c> or <c>Referer</c> with <c>Host</c> see a same-origin request; <c>rewrite</c>, the
    /// backend's own <c>host:port</c>, for named virtual hosts or dev servers that want their own name; or a fixed
    /// <c>host[:port]</c>, which health probes and inspector replays send too.
    /// </summary>
    public string HostHeader { get; set; } = HostHeaderPolicy.Preserve;

    /// <summary>What the backend gets of a path-mode request's <c>/session/{id}</c> prefix.</summary>
    public PathPrefixMode PathPrefix { get; set; } = PathPrefixMode.Strip;

    /// <summary>
    /// Path mode (<c>/session/{id}/…</c>): rewrite the backend's <c>Location</c>, <c>Content-Location</c> and
    /// <c>Refresh</c> URLs that point at its own origin or are root-relative, and <c>Set-Cookie</c> paths, to live under
    /// the session's prefix, as nginx's <c>proxy_redirect default</c> and <c>proxy_cookie_path</c> do. Off for an app
    /// that builds its public URLs from <c>X-Forwarded-Prefix</c> itself (those are left alone either way).
    /// </summary>
    public bool RewritePaths { get; set; } = true;

    /// <summary>
    /// Whether a request with a body waits for the whole body, or for the first stream window of it (16 KiB), before it
    /// takes a backend slot: a body that trickles in then holds no slot (as nginx's <c>proxy_request_buffering</c>).
    /// Off for apps that stream a request body in step with the response (each request then goes to the backend at once).
    /// </summary>
    public bool RequestBuffering { get; set; } = true;

    /// <summary>How long a keep-alive connection to the backend may sit unused in the pool before it is closed.</summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan PooledConnectionIdleTimeout { get; set; } = TimeSpan.FromMinutes(1);

    public const string RelayLoop = "Loop";

    public const string RelayTasks = "Tasks";

    /// <summary>
    /// <c>Loop</c> (the default): new plain-HTTP backend connections live on the client's event loop (docs/protocol.md
    /// §9), which reads each answer and runs the relay on in the same turn, when the uplinks run there too
    /// (<c>Uplink:Engine</c> = <c>Loop</c>, Linux x86-64); TLS backends and upgrade requests keep the runtime's sockets.
    /// <c>Tasks</c>: the backend connections use the runtime's sockets, and each answer is read on the thread pool.
    /// Measured in docs/benchmarks/2026-11-30-multiloop.md.
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Backends:Relay must be 'Loop' or 'Tasks'.")]
    [RegularExpression("^(Loop|Tasks)$", ErrorMessage = "TunnelClient:Backends:Relay must be 'Loop' or 'Tasks'.")]
    public string Relay { get; set; } = RelayLoop;
}
