using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Forwarding;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>The server's command-line switches and its --help text.</summary>
public static class CommandLine
{
    public static readonly Dictionary<string, string> SwitchMappings = new(StringComparer.Ordinal)
    {
        ["--public-url"] = "TunnelServer:PublicUrl",
        ["--tunnel-url"] = "TunnelServer:TunnelUrl",
        ["--token"] = "TunnelServer:Token",
        ["--credentials"] = "TunnelServer:CredentialsFile",
        ["--trusted-proxy"] = "ProxyEntry:TrustedProxies:0",
        ["--client-policies"] = "TunnelServer:ClientVisitorPolicies",
        ["--public-h2c-url"] = "TunnelServer:PublicH2cUrl",
        ["--admin-url"] = "TunnelServer:AdminUrl",
        ["--admin-token"] = "TunnelServer:AdminToken",
        ["--certificate-ask"] = "TunnelServer:CertificateAsk",
        ["--node-name"] = "TunnelServer:NodeName",
        ["--node-header"] = "TunnelServer:NodeHeader",
        ["--certificate"] = "TunnelServer:Certificate",
        ["--certificate-key"] = "TunnelServer:CertificateKey",
        ["--response-timeout"] = "ProxyEntry:ResponseHeadTimeout",
        ["--drain-timeout"] = "TunnelServer:DrainTimeout",
        ["--warm-up"] = "ProxyEntry:WarmUp",
        ["--max-request-headers"] = "ProxyEntry:MaxRequestHeadersBytes",
        ["--host-suffix"] = "ProxyEntry:HostSuffix",
        ["--balancing"] = "ProxyEntry:Balancing:Strategy",
        ["--affinity"] = "ProxyEntry:Balancing:Affinity",
        ["--affinity-header"] = "ProxyEntry:Balancing:AffinityHeader",
        ["--tcp-ports"] = "TunnelServer:Tcp:PortRange",
    };

    /// <summary>What the server's command line may hold: its switches and the keys of its sections.</summary>
    public static readonly CommandLineSpec Spec = new CommandLineSpec(SwitchMappings)
        .WithSection<TunnelServerOptions>(TunnelServerOptions.SectionName)
        .WithSection<ProxyEntryOptions>(ProxyEntryOptions.SectionName);

    public const string HelpText = """
        TunnelServer: accepts Tunnel2 clients' uplinks and forwards public HTTP requests to them.

        Usage: TunnelServer [options]

        Options:
          --public-url <url>         Public HTTP endpoint (ProxyEntry)   [default http://127.0.0.1:12000]
          --tunnel-url <url>         Endpoint clients connect to         [default http://127.0.0.1:12001]
                                     An https:// URL turns on TLS for that listener (public HTTPS offers HTTP/2
                                     and HTTP/1.1 by ALPN); it needs the two options below
          --public-h2c-url <url>     Optional extra public endpoint speaking cleartext HTTP/2 only (prior
                                     knowledge, for load balancers and h2load) [default none]
          --admin-url <url>          Admin listener: /metrics (Prometheus), /healthz, the admin API (/api/…,
                                     described at /openapi/v1.json), e.g. http://127.0.0.1:12002
                                     [default none: no metrics collected]
          --admin-token <token>      Bearer token admin requests must carry (16+ chars); required when the
                                     admin URL is not loopback
          --certificate-ask <b>      true: answer an edge's on-demand TLS ask (Caddy) at GET /edge/ask?domain=
                                     on the admin listener: 200 for a custom domain or {session}.<host-suffix>
                                     that a client may serve, else 404 (docs/edge.md)     [default false]
          --node-name <name>         This node's name among several behind a balancer: in logs (Node),
                                     metrics (service.instance.id) and the header below [default: host name]
          --node-header <b>          true: send Tunnel2-Node: <name> on every public response [default false]
          --certificate <pem>        Server certificate, PEM (leaf first, then intermediates); reloaded on change
          --certificate-key <pem>    Its private key, PEM, unencrypted
          --token <token>            One token for every client and session (development; the Development
                                     environment has a dev token). Needed unless --credentials is given
          --credentials <file>       Credentials file: per-client hashed tokens with the sessions each may serve,
                                     and visitor rules per session (basic auth, API keys, CIDR allow/deny);
                                     reloaded on change (docs/security.md)
          --client-policies <b>      true: clients may declare visitor rules for their sessions at login
                                     (their --basic-auth, --cidr-allow, --cidr-deny), on top of the file's
                                     [default false: such a login gets 403]
          --trusted-proxy <cidr>     Believe X-Forwarded-For from this network (a balancer in front); more with
                                     ProxyEntry__TrustedProxies__1=<cidr> ...                  [default none]
          --response-timeout <t>     Time to wait for a response head, e.g. 00:01:40 [default 100 s]
          --drain-timeout <t>        On SIGTERM/Ctrl+C: stop taking uplinks and requests, send GoAway, let requests
                                     in flight finish for up to this long, then exit 0 [default 00:00:30]
          --warm-up <t>              A node behind a balancer: for this long after start, /healthz answers 503
                                     and an unknown session 503 instead of 404, while clients reconnect
                                     (at least their TunnelClient:ReconnectMaxDelay) [default 00:00:00: none]
          --max-request-headers <n>  Largest request header block forwarded, bytes; 431 beyond [default 32768]
          --host-suffix <domain>     Host routing: {session}.<domain> reaches that session with its path
                                     unchanged (e.g. tunnel.example.com, or localhost for *.localhost in a
                                     browser); path routing keeps working on other hosts [default none]
          --balancing <strategy>     How requests spread over a session's clients: RoundRobin, LeastRequests
                                     (power of two choices) or Weighted (clients' --weight) [default RoundRobin]
          --affinity <mode>          Keep a caller on one client: None, Cookie, Header (a hash of the header
                                     --affinity-header names) or ClientIp           [default None]
          --affinity-header <name>   The header Header affinity hashes, e.g. X-User-Id
          --tcp-ports <first-last>   Raw TCP tunnels: a client logging in with --tcp gets a public TCP port of
                                     this range for its session, e.g. 20000-20100 (docs/tcp.md)
                                     [default none: off, unless the credentials file names TcpPorts]
          --environment <name>       Development loads appsettings.Development.json (dev token, debug logs)
          --help, -h                 Show this help

        Every setting can also come from appsettings.json or environment variables, e.g.
          TunnelServer__Token, TunnelServer__PublicUrl, TunnelServer__TunnelUrl, TunnelServer__InitialStreamWindow, TunnelServer__ConnectionWindow,
          TunnelServer__UnsentBytesLimit, TunnelServer__PublicReceiveBuffer, TunnelServer__UplinkReceiveBuffer, TunnelServer__UplinkSegmentSize,
          TunnelServer__KeepAliveInterval, TunnelServer__KeepAliveTimeout, TunnelServer__MaxStreamsPerUplink,
          TunnelServer__HandshakeTimeout, TunnelServer__RequestHeadersTimeout, TunnelServer__MaxFailedLoginsPerMinute, TunnelServer__MaxUplinksPerAddress,
          TunnelServer__PublicH2cUrl, TunnelServer__AdminUrl, TunnelServer__AdminToken, TunnelServer__CertificateAsk,
          TunnelServer__NodeName, TunnelServer__NodeHeader,
          ProxyEntry__MetricsSessionLimit (sessions with a metrics label of their own, the rest '_other') [100],
          TunnelServer__DrainTimeout, ProxyEntry__WarmUp, ProxyEntry__ResponseHeadTimeout, ProxyEntry__MaxRequestBodySize,
          ProxyEntry__MaxRequestHeadersBytes, ProxyEntry__HostSuffix, ProxyEntry__Hosts__<host>=<session> (custom
          domains), ProxyEntry__Balancing__Strategy, ProxyEntry__Balancing__Affinity,
          ProxyEntry__Balancing__AffinityHeader, ProxyEntry__Balancing__AffinityCookie, ProxyEntry__Balancing__EjectAfter,
          ProxyEntry__Balancing__EjectionBackoff, ProxyEntry__Balancing__MaxEjectionBackoff,
          ProxyEntry__Balancing__Sessions__<id>__Strategy (and __Affinity, __AffinityHeader: per session),
          ProxyEntry__RateLimits__PerSession__PerSecond [1000], ProxyEntry__RateLimits__PerSession__Burst [2000],
          ProxyEntry__RateLimits__PerVisitor__PerSecond [100], ProxyEntry__RateLimits__PerVisitor__Burst [200]
          (0 per second: off; the Development environment turns both off),
          ProxyEntry__RateLimits__FailedVisitorLoginsPerMinute [20], ProxyEntry__TrustedProxies__<n>,
          TunnelServer__Tcp__PortRange, TunnelServer__Tcp__BindAddress [0.0.0.0],
          TunnelServer__Tcp__MaxConnectionsPerSession [1000], TunnelServer__Tcp__IdleTimeout [00:10:00],
          TunnelServer__CredentialsFile, Serilog__MinimumLevel__Default.

        Commands (print a hash for the credentials file, reading the secret from standard input):
          TunnelServer hash-token        sha256:… for a client token or a visitor API key
          TunnelServer hash-password     a bcrypt hash for a visitor's basic-auth password (htpasswd -nbB works too)

        Public requests:  ANY http(s)://<public>/session/{id}/{path}  ->  the backend of the client serving {id}
                          ANY http(s)://{id}.<host-suffix>/{path}      ->  the same, path unchanged
        TCP sessions:     <bind address>:<the session's port>  ->  the --tcp target of the clients serving it
        Uplinks:          GET http(s)://<tunnel>/tunnel2/connect with Upgrade: tunnel2 (see docs/protocol.md)
        Health:           GET http(s)://<public>/healthz

        Exit codes: 0 stopped normally (after the drain); 2 unknown option or invalid configuration.
        """;
}
