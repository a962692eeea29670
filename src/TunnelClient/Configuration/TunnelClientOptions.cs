using System.ComponentModel.DataAnnotations;
using Tunnel2.Balancing;
using Tunnel2.Hosting.Configuration;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Relay.Shaping;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The client's settings, bound from the <c>TunnelClient</c> section (appsettings, TunnelClient__* variables, command line).</summary>
public sealed class TunnelClientOptions
{
    public const string SectionName = "TunnelClient";

    /// <summary>
    /// The server's tunnel endpoint, e.g. http://127.0.0.1:12001, or https://… for TLS; or several separated by commas
    /// (the nodes of a cluster), each then given <see cref="Uplinks"/> uplinks of its own.
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Server is required (--server).")]
    public string Server { get; set; } = "http://127.0.0.1:12001";

    /// <summary>
    /// PEM file of the CA certificate(s) an <c>https://</c> server's certificate must chain to, instead of the system's
    /// trust store (a private CA, a self-signed development certificate).
    /// </summary>
    public string? CaCertificate { get; set; }

    /// <summary>
    /// SHA-256 fingerprint of the server's exact certificate (64 hex digits, colons allowed): that certificate is then
    /// trusted whoever signed it, and any other refused. A renewed certificate needs the new fingerprint.
    /// </summary>
    public string? ServerCertificateSha256 { get; set; }

    /// <summary>The session this client serves: public requests to /session/{Session}/… reach its backend.</summary>
    [Required(ErrorMessage = "TunnelClient:Session is required (--session).")]
    public string Session { get; set; } = string.Empty;

    [Required(ErrorMessage = "TunnelClient:Token is required (--token or TunnelClient__Token).")]
    public string Token { get; set; } = string.Empty;

    /// <summary>
    /// Base URL of the backend requests are relayed to, or several separated by commas (a repeated <c>--backend</c> is
    /// joined so), each optionally followed by <c>weight=N</c>: <c>http://127.0.0.1:8081, http://127.0.0.1:8082 weight=3</c>.
    /// Several are balanced by <see cref="BackendBalancing"/> and <see cref="BackendAffinity"/>.
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Backend is required (--backend).")]
    public string Backend { get; set; } = "http://127.0.0.1:12007";

    /// <summary>How requests spread over several backends.</summary>
    public BalancingStrategy BackendBalancing { get; set; } = BalancingStrategy.RoundRobin;

    /// <summary>What keeps a caller on one of several backends (the strategy places callers without it).</summary>
    public AffinityMode BackendAffinity { get; set; } = AffinityMode.None;

    /// <summary>The header hashed when <see cref="BackendAffinity"/> is <see cref="AffinityMode.Header"/>.</summary>
    public string? BackendAffinityHeader { get; set; }

    /// <summary>The cookie that names a caller's backend when <see cref="BackendAffinity"/> is <see cref="AffinityMode.Cookie"/>.</summary>
    [RegularExpression("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", ErrorMessage = "TunnelClient:BackendAffinityCookie must be a cookie name (an RFC 9110 token).")]
    public string BackendAffinityCookie { get; set; } = "Tunnel2-Backend";

    /// <summary>
    /// Uplink connections this client keeps to the server, each logged in on its own and all serving the session; the
    /// server spreads the session's streams over them. More than one keeps a crowd of streams from resting on one TCP
    /// connection, which the kernel squeezes to a fair share when the host runs short of TCP memory.
    /// </summary>
    [Range(1, 16)]
    public int Uplinks { get; set; } = 1;

    /// <summary>
    /// A cluster behind one name: with an interval here, each server given by a host name is resolved that often and the
    /// client keeps <see cref="Uplinks"/> uplinks to every address the name has, so nodes can be added and removed in
    /// DNS; the uplinks of an address that is gone drain and close. Zero (the default): the name is dialled as one server.
    /// </summary>
    [TimeSpanRange("00:00:00", "01:00:00")]
    public TimeSpan ResolveInterval { get; set; }

    /// <summary>This client's share of the session's traffic when the server balances it by weight (1-100).</summary>
    [Range(1, 100)]
    public int Weight { get; set; } = 1;

    /// <summary>
    /// <c>user:password</c>: visitors of this session must send it by basic auth. The client sends the server a bcrypt
    /// hash, never the password; the server must allow declared rules (<c>TunnelServer:ClientVisitorPolicies</c>).
    /// </summary>
    public string? BasicAuth { get; set; }

    /// <summary>Only visitors from these networks (comma-separated CIDR, IPv4 or IPv6) reach this session.</summary>
    public string? CidrAllow { get; set; }

    /// <summary>Visitors from these networks (comma-separated CIDR) get 403.</summary>
    public string? CidrDeny { get; set; }

    /// <summary>
    /// A path on the backend to probe, e.g. <c>/healthz</c>: while its answer is not 2xx or 3xx, the server sends this
    /// client no requests (with several backends: a backend that fails gets none, and the server none while all fail).
    /// Null: no probe, always ready.
    /// </summary>
    public string? HealthPath { get; set; }

    /// <summary>How often the health path is probed.</summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan HealthInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>A probe not answered within this counts as failed.</summary>
    [TimeSpanRange("00:00:00.050", "00:10:00")]
    public TimeSpan HealthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// Backend requests waiting for their response head at once, across all uplinks; more wait in the queue. A request
    /// gives its slot back once its response head is out, so a long download, an SSE stream or a WebSocket holds none.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxConcurrency { get; set; } = 1000;

    /// <summary>
    /// Upgraded streams (WebSockets and other protocol switches) at once, counted from the upgrade request on; more
    /// get 503. Half the server's default streams per uplink, so they cannot crowd out ordinary requests.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxUpgradedStreams { get; set; } = 5000;

    /// <summary>An upgraded stream that moved no byte either way for this long is closed (both sides see the connection cut).</summary>
    [TimeSpanRange("00:00:01", "1.00:00:00")]
    public TimeSpan UpgradedIdleTimeout { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>Requests that may wait for a slot; beyond that they are refused at once with 503.</summary>
    [Range(0, 1_000_000)]
    public int MaxQueue { get; set; } = 10_000;

    /// <summary>
    /// Whether a request with a body waits for the whole body, or for the first stream window of it (16 KiB), before it
    /// takes a backend slot: a body that trickles in then holds no slot (as nginx's <c>proxy_request_buffering</c>).
    /// Off for apps that stream a request body in step with the response (each request then goes to the backend at once).
    /// </summary>
    public bool RequestBuffering { get; set; } = true;

    /// <summary>
    /// Path mode (<c>/session/{id}/…</c>): rewrite the backend's <c>Location</c>, <c>Content-Location</c> and
    /// <c>Refresh</c> URLs that point at its own origin or are root-relative, and <c>Set-Cookie</c> paths, to live under
    /// the session's prefix, as nginx's <c>proxy_redirect default</c> and <c>proxy_cookie_path</c> do. Off for an app
    /// that builds its public URLs from <c>X-Forwarded-Prefix</c> itself (those are left alone either way).
    /// </summary>
    public bool RewritePaths { get; set; } = true;

    /// <summary>
    /// The <c>Host</c> the backend is sent: <c>preserve</c>, the caller's (as ngrok, frp and cloudflared pass it), so apps
    /// that compare <c>Origin</c> or <c>Referer</c> with <c>Host</c> see a same-origin request; <c>rewrite</c>, the
    /// backend's own <c>host:port</c>, for named virtual hosts or dev servers that want their own name; or a fixed
    /// <c>host[:port]</c>, which health probes and inspector replays send too.
    /// </summary>
    public string HostHeader { get; set; } = HostHeaderPolicy.Preserve;

    /// <summary>
    /// Path mode: <c>Strip</c> sends <c>/session/{id}/x</c> to the backend as <c>/x</c> (and rewrites its redirects and
    /// cookie paths, <see cref="RewritePaths"/>); <c>Keep</c> sends it as the caller did, for apps served under that base
    /// path themselves (Jupyter's <c>base_url</c>), and rewrites nothing.
    /// </summary>
    public PathPrefixMode PathPrefix { get; set; } = PathPrefixMode.Strip;

    [TimeSpanRange("00:00:00.010", "00:10:00")]
    public TimeSpan ReconnectMinDelay { get; set; } = TimeSpan.FromMilliseconds(250);

    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan ReconnectMaxDelay { get; set; } = TimeSpan.FromSeconds(30);

    [TimeSpanRange("00:00:00.100", "00:10:00")]
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>How long a keep-alive connection to the backend may sit unused in the pool before it is closed.</summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan PooledConnectionIdleTimeout { get; set; } = TimeSpan.FromMinutes(1);

    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan KeepAliveInterval { get; set; } = TimeSpan.FromSeconds(15);

    [TimeSpanRange("00:00:00.300", "01:00:00")]
    public TimeSpan KeepAliveTimeout { get; set; } = TimeSpan.FromSeconds(45);

    /// <summary>
    /// How the uplink is carried: <c>upgrade</c> (an HTTP/1.1 upgrade to raw frames, the default and the cheaper) or
    /// <c>websocket</c> (the same frames in WebSocket binary messages, for proxies that pass only WebSocket upgrades).
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Transport must be 'upgrade' or 'websocket'.")]
    [RegularExpression("^(upgrade|websocket)$", ErrorMessage = "TunnelClient:Transport must be 'upgrade' or 'websocket'.")]
    public string Transport { get; set; } = UpgradeTransport;

    public const string UpgradeTransport = "upgrade";

    public const string WebSocketTransport = "websocket";

    /// <summary>
    /// TCP_NOTSENT_LOWAT on the uplink and backend sockets: the most bytes each keeps queued unsent (0 = the system's
    /// default, unbounded up to tcp_wmem). Bounds the kernel memory a crowd of slow streams parks on this host.
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int UnsentBytesLimit { get; set; } = Tunnel2.Hosting.Sockets.UnsentBytesLimit.Default;

    /// <summary>
    /// SO_RCVBUF of the uplink socket (0 = the kernel's autotuning; the upgrade transport only). Small enough that the
    /// uplink keeps working when the host runs short of TCP memory; a long, fast path may want more.
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int UplinkReceiveBuffer { get; set; } = Tunnel2.Hosting.Sockets.UplinkReceiveBuffer.Default;

    /// <summary>TCP_MAXSEG of the uplink socket (0 = the path's own; the upgrade transport only), as the server's setting of that name.</summary>
    [ZeroOrRange(536, 65535)] // Linux refuses a TCP_MAXSEG below 88; 536 is the smallest MSS every IPv4 host must take
    public int UplinkSegmentSize { get; set; } = Tunnel2.Hosting.Sockets.UplinkSegmentSize.Default;

    /// <summary>
    /// The most response-body bytes read from backends and waiting for the uplink's writer at once, over all streams of
    /// one uplink (0 = no bound beyond the flow-control windows). When the uplink cannot send as fast as the callers'
    /// windows allow, further reads wait their turn and the bytes stay in the backend sockets instead of this process.
    /// </summary>
    [Range(0, 1024 * 1024 * 1024)]
    public int QueuedDataLimit { get; set; } = UplinkSettings.DefaultQueuedDataLimit;

    /// <summary>
    /// An admin listener, <c>http://127.0.0.1:12003</c> for instance, serving <c>/metrics</c> (Prometheus) and
    /// <c>/healthz</c>. Null: none, and no metrics are collected. Anywhere but loopback it needs <see cref="AdminToken"/>.
    /// </summary>
    public string? AdminUrl { get; set; }

    /// <summary>A bearer token every request to the admin listener or the inspector must carry (at least 16 characters); required off loopback.</summary>
    public string? AdminToken { get; set; }

    /// <summary>
    /// The request inspector's listener, <c>http://127.0.0.1:4040</c> for instance: its page at <c>/</c>, the last
    /// requests at <c>/api/requests</c>, replay and HAR export. Null: off, and nothing is captured.
    /// </summary>
    public string? InspectUrl { get; set; }

    /// <summary>How many of the last requests the inspector keeps.</summary>
    [Range(1, 10_000)]
    public int InspectCapacity { get; set; } = 200;

    /// <summary>How many bytes of each request and response body the inspector keeps (the size is counted in full).</summary>
    [Range(0, 1024 * 1024)]
    public int InspectBodyLimit { get; set; } = 64 * 1024;

    /// <summary>Show <c>Authorization</c>, <c>Proxy-Authorization</c>, <c>Cookie</c> and <c>Set-Cookie</c> values in the inspector and its HAR export instead of <c>[redacted]</c>.</summary>
    public bool InspectRevealSecrets { get; set; }

    /// <summary>Raw TCP: the target to expose on a public TCP port of the session (section <c>TunnelClient:Tcp</c>, docs/tcp.md).</summary>
    [Microsoft.Extensions.Options.ValidateObjectMembers]
    public Tcp.TcpClientOptions Tcp { get; set; } = new();

    /// <summary>On stop (SIGTERM, Ctrl+C): how long the streams in flight may take to finish after the GoAway before the uplink closes.</summary>
    [TimeSpanRange("00:00:00", "01:00:00", ErrorMessage = "TunnelClient:DrainTimeout must be between 00:00:00 and 01:00:00.")]
    public TimeSpan DrainTimeout { get; set; } = TimeSpan.FromSeconds(30);
}
