using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>The server's settings, bound from the <c>TunnelServer</c> section (appsettings, TUNNELSERVER__* variables, command line).</summary>
public sealed class TunnelServerOptions
{
    public const string SectionName = "TunnelServer";

    /// <summary>Where ProxyEntry takes public HTTP requests.</summary>
    [Required]
    public string PublicUrl { get; set; } = "http://127.0.0.1:12000";

    /// <summary>Where clients open their uplinks.</summary>
    [Required]
    public string TunnelUrl { get; set; } = "http://127.0.0.1:12001";

    /// <summary>
    /// PEM file of the server's certificate (leaf first, then any intermediates), for the listeners whose URL is
    /// <c>https://</c>. Reloaded when the file changes; connections already open keep the certificate they began with.
    /// </summary>
    public string? Certificate { get; set; }

    /// <summary>PEM file of the certificate's private key (PKCS#8, or the key type's own PEM form); unencrypted.</summary>
    public string? CertificateKey { get; set; }

    /// <summary>
    /// An optional second public listener, <c>http://</c>, that speaks cleartext HTTP/2 with prior knowledge only (h2c:
    /// a load balancer's <c>proto h2</c>, <c>curl --http2-prior-knowledge</c>, h2load). Kestrel cannot tell h2c from
    /// HTTP/1.1 on one cleartext port, hence a port of its own. An <c>https://</c> PublicUrl offers HTTP/2 by ALPN anyway.
    /// </summary>
    public string? PublicH2cUrl { get; set; }

    /// <summary>
    /// An admin listener, <c>http://127.0.0.1:12002</c> for instance, serving <c>/metrics</c> (Prometheus),
    /// <c>/healthz</c> and the admin API (<c>/api/…</c>, <c>/openapi/v1.json</c>). Null: none, and no metrics are collected. Anywhere but loopback it needs <see cref="AdminToken"/>.
    /// </summary>
    public string? AdminUrl { get; set; }

    /// <summary>A bearer token every admin request must carry (at least 16 characters); required off loopback.</summary>
    public string? AdminToken { get; set; }

    /// <summary>
    /// Answer an edge's question "may I get a certificate for this name?" at <c>GET /edge/ask?domain=…</c> on the admin
    /// listener (Caddy's on-demand TLS <c>ask</c>): 200 for a custom domain or a session host some client may serve,
    /// else 404. Needs <see cref="AdminUrl"/> and host routing (<c>ProxyEntry:HostSuffix</c> or <c>ProxyEntry:Hosts</c>).
    /// </summary>
    public bool CertificateAsk { get; set; }

    /// <summary>
    /// This node's name among several servers behind one balancer: in its logs (the <c>Node</c> property), its metrics
    /// (<c>service.instance.id</c>) and, with <see cref="NodeHeader"/>, a response header. Null: the machine's name.
    /// </summary>
    [RegularExpression("^[A-Za-z0-9._:-]{1,64}$", ErrorMessage = "TunnelServer:NodeName must be 1 to 64 characters of A-Z a-z 0-9 . _ : -.")]
    public string? NodeName { get; set; }

    /// <summary>Send <c>Tunnel2-Node: &lt;NodeName&gt;</c> on every public response (to see which node answered).</summary>
    public bool NodeHeader { get; set; }

    /// <summary><see cref="NodeName"/>, or the machine's name when none is set.</summary>
    public string ResolvedNodeName => string.IsNullOrWhiteSpace(NodeName) ? Environment.MachineName : NodeName;

    /// <summary>
    /// One token for every client and session: for development and single-user servers. There is no default: the dev
    /// value lives only in appsettings.Development.json. A server with a <see cref="CredentialsFile"/> may leave it unset.
    /// </summary>
    [StringLength(int.MaxValue, MinimumLength = 8, ErrorMessage = "TunnelServer:Token must be at least 8 characters.")]
    public string? Token { get; set; }

    /// <summary>
    /// A JSON file of clients (hashed tokens, each with the sessions it may serve) and visitor policies per session
    /// (basic auth, API keys, address allow and deny lists); read again when it changes. docs/security.md describes it.
    /// </summary>
    public string? CredentialsFile { get; set; }

    /// <summary>
    /// Whether a client may declare visitor rules for its session at login (its <c>--basic-auth</c>, <c>--cidr-allow</c>,
    /// <c>--cidr-deny</c>), applied on top of the credentials file's. Off: such a login gets 403.
    /// </summary>
    public bool ClientVisitorPolicies { get; set; }

    [Range(16 * 1024, 16 * 1024 * 1024)]
    public int MaxFramePayload { get; set; } = UplinkSettings.DefaultMaxFramePayload;

    [Range(16 * 1024, int.MaxValue)]
    public int InitialStreamWindow { get; set; } = UplinkSettings.DefaultInitialStreamWindow;

    /// <summary>Beyond the initial window of each open stream, the most credit either end of an uplink grants over all its streams.</summary>
    [Range(1024 * 1024, 1024 * 1024 * 1024)]
    public int ConnectionWindow { get; set; } = UplinkSettings.DefaultConnectionWindow;

    /// <summary>
    /// TCP_NOTSENT_LOWAT on every socket of both listeners (public callers and uplinks): the most bytes each keeps queued
    /// unsent (0 = the system's default, unbounded up to tcp_wmem). Bounds the kernel memory slow callers park here.
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int UnsentBytesLimit { get; set; } = Tunnel2.Hosting.Sockets.UnsentBytesLimit.Default;

    /// <summary>
    /// SO_RCVBUF of every public caller's socket (0 = the system's autotuning, up to tcp_rmem). What a caller whose
    /// upload the backend reads slowly can park in the kernel; a fixed size also caps one upload at about this many
    /// bytes per round trip, so set it only where many slow uploads meet a kernel short of TCP memory.
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int PublicReceiveBuffer { get; set; }

    /// <summary>
    /// SO_RCVBUF of each uplink socket (0 = the kernel's autotuning). Small enough that the uplink keeps working when the
    /// host runs short of TCP memory; a long, fast path between client and server may want more (window per round trip).
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int UplinkReceiveBuffer { get; set; } = Tunnel2.Hosting.Sockets.UplinkReceiveBuffer.Default;

    /// <summary>
    /// TCP_MAXSEG of each uplink socket (0 = the path's own): only ever lowers it, so it matters only on loopback, where
    /// 64 KiB segments do not fit a socket's fair share of TCP memory once the host runs short of it.
    /// </summary>
    [ZeroOrRange(536, 65535)] // Linux refuses a TCP_MAXSEG below 88; 536 is the smallest MSS every IPv4 host must take
    public int UplinkSegmentSize { get; set; } = Tunnel2.Hosting.Sockets.UplinkSegmentSize.Default;

    /// <summary>
    /// How long a public caller may take to send a request's head (Kestrel's RequestHeadersTimeout): a slowloris
    /// connection that drips its head is closed after it.
    /// </summary>
    [TimeSpanRange("00:00:00.100", "00:10:00")]
    public TimeSpan RequestHeadersTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>How long a connection to the tunnel port may take to send its upgrade request; then it gets 408 and is closed.</summary>
    [TimeSpanRange("00:00:00.100", "00:05:00")]
    public TimeSpan HandshakeTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Failed logins (wrong or missing token) one source address may make per minute on the tunnel port; beyond them
    /// every login from it, right token included, gets 429 with Retry-After until a count has refilled (one every
    /// 60/N seconds). Each login is judged in one step, so parallel guesses cannot pass the limit either.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxFailedLoginsPerMinute { get; set; } = 20;

    /// <summary>Uplinks one source address may hold at once (a client holds 1 to 16); more get 429.</summary>
    [Range(1, 1_000_000)]
    public int MaxUplinksPerAddress { get; set; } = 1000;

    [Range(1, 1_000_000)]
    public int MaxStreamsPerUplink { get; set; } = 10_000;

    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan KeepAliveInterval { get; set; } = TimeSpan.FromSeconds(15);

    [TimeSpanRange("00:00:00.300", "01:00:00")]
    public TimeSpan KeepAliveTimeout { get; set; } = TimeSpan.FromSeconds(45);

    /// <summary>Raw TCP tunnels: the sessions' public TCP ports and their limits (section <c>TunnelServer:Tcp</c>, docs/tcp.md).</summary>
    [Microsoft.Extensions.Options.ValidateObjectMembers]
    public Tcp.TcpServerOptions Tcp { get; set; } = new();

    /// <summary>On shutdown, how long public requests in flight may take to finish before their uplinks are closed.</summary>
    [TimeSpanRange("00:00:00", "01:00:00", ErrorMessage = "TunnelServer:DrainTimeout must be between 00:00:00 and 01:00:00.")]
    public TimeSpan DrainTimeout { get; set; } = TimeSpan.FromSeconds(30);

    public UplinkSettings ToUplinkSettings() => new()
    {
        MaxFramePayload = MaxFramePayload,
        InitialStreamWindow = InitialStreamWindow,
        ConnectionWindow = ConnectionWindow,
        MaxConcurrentStreams = MaxStreamsPerUplink,
        KeepAliveInterval = KeepAliveInterval,
        KeepAliveTimeout = KeepAliveTimeout,
    };
}
