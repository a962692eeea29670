using Tunnel2.Hosting;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The client's command-line switches and its --help text.</summary>
public static class CommandLine
{
    public static readonly Dictionary<string, string> SwitchMappings = new(StringComparer.Ordinal)
    {
        ["--server"] = "TunnelClient:Server",
        ["--session"] = "TunnelClient:Session",
        ["--token"] = "TunnelClient:Token",
        ["--backend"] = "TunnelClient:Backend",
        ["--backend-balancing"] = "TunnelClient:BackendBalancing",
        ["--backend-affinity"] = "TunnelClient:BackendAffinity",
        ["--backend-affinity-header"] = "TunnelClient:BackendAffinityHeader",
        ["--uplinks"] = "TunnelClient:Uplinks",
        ["--resolve-interval"] = "TunnelClient:ResolveInterval",
        ["--weight"] = "TunnelClient:Weight",
        ["--basic-auth"] = "TunnelClient:BasicAuth",
        ["--cidr-allow"] = "TunnelClient:CidrAllow",
        ["--cidr-deny"] = "TunnelClient:CidrDeny",
        ["--health-path"] = "TunnelClient:HealthPath",
        ["--health-interval"] = "TunnelClient:HealthInterval",
        ["--health-timeout"] = "TunnelClient:HealthTimeout",
        ["--max-concurrency"] = "TunnelClient:MaxConcurrency",
        ["--max-queue"] = "TunnelClient:MaxQueue",
        ["--max-upgraded-streams"] = "TunnelClient:MaxUpgradedStreams",
        ["--upgraded-idle-timeout"] = "TunnelClient:UpgradedIdleTimeout",
        ["--request-buffering"] = "TunnelClient:RequestBuffering",
        ["--rewrite-paths"] = "TunnelClient:RewritePaths",
        ["--host-header"] = "TunnelClient:HostHeader",
        ["--path-prefix"] = "TunnelClient:PathPrefix",
        ["--drain-timeout"] = "TunnelClient:DrainTimeout",
        ["--admin-url"] = "TunnelClient:AdminUrl",
        ["--admin-token"] = "TunnelClient:AdminToken",
        ["--inspect-url"] = "TunnelClient:InspectUrl",
        ["--inspect-capacity"] = "TunnelClient:InspectCapacity",
        ["--inspect-body-limit"] = "TunnelClient:InspectBodyLimit",
        ["--inspect-reveal-secrets"] = "TunnelClient:InspectRevealSecrets",
        ["--pooled-connection-idle-timeout"] = "TunnelClient:PooledConnectionIdleTimeout",
        ["--transport"] = "TunnelClient:Transport",
        ["--ca-certificate"] = "TunnelClient:CaCertificate",
        ["--server-certificate-sha256"] = "TunnelClient:ServerCertificateSha256",
        ["--tcp"] = "TunnelClient:Tcp:Target",
        ["--tcp-proxy-protocol"] = "TunnelClient:Tcp:ProxyProtocol",
    };

    /// <summary>What the client's command line may hold: its switches and the keys of its section.</summary>
    public static readonly CommandLineSpec Spec = new CommandLineSpec(SwitchMappings).WithSection<TunnelClientOptions>(TunnelClientOptions.SectionName);

    private static readonly string[] ListSwitches = ["--backend", "--server"];

    /// <summary>
    /// The arguments with every <c>--backend</c> joined into one, comma-separated (what <c>TunnelClient:Backend</c> reads),
    /// and every <c>--server</c> likewise, since the configuration's command-line source keeps only the last of a
    /// repeated switch.
    /// </summary>
    public static string[] JoinRepeatedLists(string[] args)
    {
        foreach (string name in ListSwitches)
        {
            args = JoinRepeated(args, name);
        }

        return args;
    }

    private static string[] JoinRepeated(string[] args, string name)
    {
        var values = new List<string>();
        var rest = new List<string>(args.Length);
        for (int i = 0; i < args.Length; i++)
        {
            if (args[i] == name && i + 1 < args.Length)
            {
                values.Add(args[++i]);
            }
            else if (args[i].StartsWith(name + "=", StringComparison.Ordinal))
            {
                values.Add(args[i][(name.Length + 1)..]);
            }
            else
            {
                rest.Add(args[i]);
            }
        }

        if (values.Count < 2)
        {
            return args;
        }

        rest.Add(name);
        rest.Add(string.Join(", ", values));
        return [.. rest];
    }

    public const string HelpText = """
        TunnelClient: keeps an uplink to a Tunnel2 server and relays the requests of a session to a backend.

        Usage: TunnelClient --session <id> --token <token> [options]
               tunnel2 http <port | host:port | url> --server <url> --token <token> [options]
                 the short form (as the .NET tool): serve that backend under --session, or a new
                 random session; the public URL is logged once connected ("Forwarding … -> …")
               tunnel2 tcp <port | host:port> --server <url> --token <token> [options]
                 the same for a raw TCP service (a database, SSH, Redis): the server gives the
                 session a public TCP port, logged once connected ("Forwarding tcp://… -> …")

        Options:
          --server <url>             Server tunnel endpoint            [default http://127.0.0.1:12001]
                                     (repeat it, or separate by commas, for the nodes of a cluster:
                                     each node gets uplinks of its own)
                                     https://… for TLS: the certificate must be trusted by the system
                                     store unless one of the next two options is given
          --ca-certificate <pem>     Trust the CA certificate(s) in this PEM file instead of the system store
          --server-certificate-sha256 <hex>
                                     Trust exactly the server certificate with this SHA-256 fingerprint
                                     (as openssl x509 -fingerprint -sha256 prints it), self-signed too
          --session <id>             Session to serve (1-128 chars of A-Z a-z 0-9 - _ . ~)
          --token <token>            Token the server expects
          --backend <url>            Backend base URL                  [default http://127.0.0.1:12007]
                                     Give it several times (or comma-separated) to balance over several
                                     backends; "<url> weight=<n>" (quoted) sets one's weight (1-100)
          --backend-balancing <s>    How requests spread over several backends: RoundRobin, LeastRequests
                                     (fewer in flight of two at random) or Weighted   [default RoundRobin]
          --backend-affinity <mode>  Keep a caller on one backend: None, Cookie (Tunnel2-Backend), Header
                                     (a hash of the header named next) or ClientIp    [default None]
          --backend-affinity-header <name>
                                     The header Header affinity hashes, e.g. X-User-Id
          --uplinks <n>              Uplink connections, all serving the session (1-16) [default 1]
          --resolve-interval <t>     A cluster behind one name: resolve each server name this often and keep
                                     --uplinks uplinks to every address it has (nodes join and leave by DNS)
                                     [default 00:00:00: the name is one server]
          --weight <n>               This client's share when the server balances the session by weight
                                     (1-100)                                [default 1]
          --tcp <host:port>          Also expose this TCP service (or, without --backend, only it) on a public
                                     TCP port the server gives the session (docs/tcp.md)  [default none]
          --tcp-proxy-protocol <p>   v2: start each target connection with a PROXY protocol v2 header naming
                                     the caller; off: raw bytes only              [default off]
          --basic-auth <user:pass>   Visitors must log in with this (basic auth); the server gets a bcrypt
                                     hash only, and must allow clients' rules (--client-policies)
          --cidr-allow <cidrs>       Only visitors from these networks, e.g. 10.0.0.0/8,2001:db8::/32
          --cidr-deny <cidrs>        Visitors from these networks get 403
          --health-path <path>       Probe this path on each backend (e.g. /healthz); a backend that fails
                                     (not 2xx/3xx, or no answer) gets no requests, and while all fail the
                                     server sends this client none                   [default none]
          --health-interval <t>      How often to probe it                  [default 00:00:05]
          --health-timeout <t>       A probe not answered within this fails [default 00:00:02]
          --max-concurrency <n>      Backend requests waiting for their response head at once, across
                                     the uplinks; a slot is free again once the head is out, so long
                                     downloads, SSE and WebSockets hold none      [default 1000]
          --max-queue <n>            Requests waiting beyond that; more get 503 at once [default 10000]
          --max-upgraded-streams <n> WebSockets and other upgraded streams at once; more get 503 [default 5000]
          --upgraded-idle-timeout <t>
                                     Close an upgraded stream that moved no byte this long [default 00:05:00]
          --request-buffering <b>    true: a request takes a backend slot once its body (or the first 16 KiB)
                                     is here, so slow uploads hold none; false: at once, for apps
                                     that stream the body in step with the response [default true]
          --rewrite-paths <b>        true: redirects (Location, Content-Location, Refresh) to the backend's own
                                     origin or root, and Set-Cookie paths, are moved under /session/{id}
                                     as nginx's proxy_redirect does; false: passed as sent [default true]
          --host-header <h>          The Host the backend gets: preserve (the caller's, as ngrok does; apps
                                     that check Origin or Referer against Host need it), rewrite (the
                                     backend's own host:port, for named virtual hosts), or a fixed
                                     host[:port], which health probes and replays send too [default preserve]
          --path-prefix <mode>       Path mode: strip (/session/{id}/x reaches the backend as /x) or keep (as
                                     the caller sent it, nothing rewritten: for apps with a base path of
                                     their own, e.g. Jupyter's --NotebookApp.base_url=/session/{id}/)
                                     [default strip]
          --drain-timeout <t>        On SIGTERM/Ctrl+C: send GoAway, let requests in flight finish for up to
                                     this long, then exit 0                 [default 00:00:30]
          --pooled-connection-idle-timeout <t>
                                     Close a keep-alive backend connection unused this long [default 00:01:00]
          --transport <kind>         upgrade (HTTP/1.1 upgrade to raw frames) or websocket (the same
                                     frames in WebSocket binary messages, for proxies that pass only
                                     WebSocket)                             [default upgrade]
          --admin-url <url>          Admin listener: /metrics (Prometheus) and /healthz, e.g. http://127.0.0.1:12003
                                     [default none: no metrics collected]
          --admin-token <token>      Bearer token admin and inspector requests must carry (16+ chars);
                                     required when either URL is not loopback
          --inspect-url <url>        Request inspector, like ngrok's: last requests with headers and bodies,
                                     replay, HAR export, e.g. http://127.0.0.1:4040 [default none: off]
          --inspect-capacity <n>     Requests the inspector keeps                  [default 200]
          --inspect-body-limit <n>   Bytes of each body it keeps                   [default 65536]
          --inspect-reveal-secrets <b>
                                     true: show Authorization, Cookie and Set-Cookie values instead of
                                     [redacted]                             [default false]
          --environment <name>       Development loads appsettings.Development.json (dev token)
          --help, -h                 Show this help

        Every setting can also come from appsettings.json or environment variables:
          TunnelClient__Server, TunnelClient__Session, TunnelClient__Token, TunnelClient__Backend,
          TunnelClient__BackendBalancing, TunnelClient__BackendAffinity, TunnelClient__BackendAffinityHeader,
          TunnelClient__BackendAffinityCookie,
          TunnelClient__Uplinks, TunnelClient__ResolveInterval, TunnelClient__Weight, TunnelClient__BasicAuth, TunnelClient__CidrAllow, TunnelClient__CidrDeny, TunnelClient__HealthPath, TunnelClient__HealthInterval,
          TunnelClient__HealthTimeout, TunnelClient__MaxConcurrency, TunnelClient__MaxQueue, TunnelClient__RequestBuffering,
          TunnelClient__MaxUpgradedStreams, TunnelClient__UpgradedIdleTimeout, TunnelClient__RewritePaths,
          TunnelClient__HostHeader, TunnelClient__PathPrefix,
          TunnelClient__ReconnectMinDelay, TunnelClient__PooledConnectionIdleTimeout,
          TunnelClient__ReconnectMaxDelay, TunnelClient__KeepAliveInterval, TunnelClient__KeepAliveTimeout,
          TunnelClient__DrainTimeout, TunnelClient__Transport, TunnelClient__CaCertificate,
          TunnelClient__ServerCertificateSha256, TunnelClient__AdminUrl, TunnelClient__AdminToken,
          TunnelClient__InspectUrl, TunnelClient__InspectCapacity, TunnelClient__InspectBodyLimit,
          TunnelClient__InspectRevealSecrets, TunnelClient__Tcp__Target, TunnelClient__Tcp__ProxyProtocol,
          TunnelClient__Tcp__ConnectTimeout (a TCP target not connected within this is given up on) [00:00:10],
          TunnelClient__UnsentBytesLimit (TCP_NOTSENT_LOWAT of uplink and backend sockets, 0 = off) [131072],
          TunnelClient__UplinkReceiveBuffer (SO_RCVBUF of the uplink socket, 0 = kernel autotuning) [262144],
          TunnelClient__UplinkSegmentSize (TCP_MAXSEG of the uplink socket, 0 = the path's own) [16384],
          TunnelClient__QueuedDataLimit (response-body bytes read from backends ahead of the uplink's writer, 0 = unbounded) [16777216].

        Exit codes: 0 stopped normally (after the drain); 2 unknown option or invalid configuration; 3 the server refused the token (401/403);
          4 the server's TLS certificate was refused (the log line says why).
        """;
}
