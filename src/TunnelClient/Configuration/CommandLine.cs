using Tunnel2.Hosting;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The client's command-line switches and its --help text.</summary>
public static partial class CommandLine
{
    public static readonly Dictionary<string, string> SwitchMappings = new(StringComparer.Ordinal)
    {
        ["--server"] = "TunnelClient:Server",
        ["--session"] = "TunnelClient:Session",
        ["--token"] = "TunnelClient:Token",
        ["--backend"] = "TunnelClient:Backends:Urls",
        ["--backend-balancing"] = "TunnelClient:Backends:Strategy",
        ["--backend-affinity"] = "TunnelClient:Backends:Affinity",
        ["--backend-affinity-header"] = "TunnelClient:Backends:AffinityHeader",
        ["--uplinks"] = "TunnelClient:Uplink:Count",
        ["--resolve-interval"] = "TunnelClient:Uplink:ResolveInterval",
        ["--weight"] = "TunnelClient:Weight",
        ["--basic-auth"] = "TunnelClient:Visitors:BasicAuth",
        ["--cidr-allow"] = "TunnelClient:Visitors:CidrAllow",
        ["--cidr-deny"] = "TunnelClient:Visitors:CidrDeny",
        ["--health-path"] = "TunnelClient:Health:Path",
        ["--health-interval"] = "TunnelClient:Health:Interval",
        ["--health-timeout"] = "TunnelClient:Health:Timeout",
        ["--max-concurrency"] = "TunnelClient:Limits:MaxConcurrency",
        ["--max-queue"] = "TunnelClient:Limits:MaxQueue",
        ["--max-upgraded-streams"] = "TunnelClient:Limits:MaxUpgradedStreams",
        ["--upgraded-idle-timeout"] = "TunnelClient:Limits:UpgradedIdleTimeout",
        ["--request-buffering"] = "TunnelClient:Backends:RequestBuffering",
        ["--rewrite-paths"] = "TunnelClient:Backends:RewritePaths",
        ["--host-header"] = "TunnelClient:Backends:HostHeader",
        ["--path-prefix"] = "TunnelClient:Backends:PathPrefix",
        ["--drain-timeout"] = "TunnelClient:DrainTimeout",
        ["--admin-url"] = "TunnelClient:Admin:Url",
        ["--admin-token"] = "TunnelClient:Admin:Token",
        ["--inspect-url"] = "TunnelClient:Inspector:Url",
        ["--inspect-capacity"] = "TunnelClient:Inspector:Capacity",
        ["--inspect-body-limit"] = "TunnelClient:Inspector:BodyLimit",
        ["--inspect-reveal-secrets"] = "TunnelClient:Inspector:RevealSecrets",
        ["--pooled-connection-idle-timeout"] = "TunnelClient:Backends:PooledConnectionIdleTimeout",
        ["--transport"] = "TunnelClient:Uplink:Transport",
        ["--ca-certificate"] = "TunnelClient:Tls:CaCertificate",
        ["--server-certificate-sha256"] = "TunnelClient:Tls:ServerCertificateSha256",
        ["--tcp"] = "TunnelClient:Tcp:Target",
        ["--tcp-proxy-protocol"] = "TunnelClient:Tcp:ProxyProtocol",
    };

    /// <summary>What the client's command line may hold: its switches and the keys of its section.</summary>
    public static readonly CommandLineSpec Spec = new CommandLineSpec(SwitchMappings).WithKeys(Keys)
        .WithRenamedKeys(LegacyKeys.Renamed);

    private static readonly string[] ListSwitches = ["--backend", "--server"];

    /// <summary>
    /// The arguments with every <c>--backend</c> joined into one, comma-separated (what <c>TunnelClient:Backends:Urls</c> reads),
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

    private const string Usage = """
        TunnelClient: keeps an uplink to a Tunnel2 server and relays the requests of a session to a backend.

        Usage: TunnelClient --session <id> --token <token> [options]
               tunnel2 http <port | host:port | url> --server <url> --token <token> [options]
                 the short form (as the .NET tool): serve that backend under --session, or a new
                 random session; the public URL is logged once connected ("Forwarding … -> …")
               tunnel2 tcp <port | host:port> --server <url> --token <token> [options]
                 the same for a raw TCP service (a database, SSH, Redis): the server gives the
                 session a public TCP port, logged once connected ("Forwarding tcp://… -> …")

        Every setting below is a key of appsettings.json, an environment variable (':' becomes '__', e.g.
        TunnelClient__Limits__MaxConcurrency=200) and a command-line option (--TunnelClient:Limits:MaxConcurrency=200);
        the common ones have a switch too (--max-concurrency 200). Later sources win: appsettings.json, then the environment,
        then the command line. Keys of an earlier release still work for one more, with a warning naming the new key.

          --environment <name>  Development loads appsettings.Development.json (dev token)
          --help, -h            Show the common options
          --help-all            Show every setting (this text)
          --version             Show the version

        """;

    private const string Footer = """
        Exit codes: 0 stopped normally (after the drain); 2 unknown option, invalid configuration, or a port already in use;
          3 the server refused the login for good (token, session, TCP, version, or the wrong port: the log line says which);
          4 the server's TLS certificate was refused (the log line says why).
        """;

    /// <summary>The --help-all text: how to run it, every setting (<see cref="Settings"/>, generated from the options), and the rest.</summary>
    public const string HelpText = Usage + "\n" + Settings + "\n\n" + Footer;

    /// <summary>The --help text: the usage and the options most runs need.</summary>
    public const string ShortHelpText = """
        TunnelClient: keeps an uplink to a Tunnel2 server and relays the requests of a session to a backend.

        Usage: TunnelClient --server <url> --session <id> --token <token> --backend <url> [options]
               tunnel2 http <port | host:port | url> --server <url> --token <token> [options]
               tunnel2 tcp <port | host:port> --server <url> --token <token> [options]
        Once connected it prints where callers reach the session, on a line of its own:
          Forwarding http://tunnel.example:12000/session/my-app/ -> http://127.0.0.1:8080

        Common options:
          --server <url>           The server's tunnel port (its --tunnel-url) [default http://127.0.0.1:12001]
          --session <id>           The session served: public requests to /session/<id>/… reach the backend
          --token <token>          The token the server expects of this client
          --backend <url>          The local app [default http://127.0.0.1:12007]; repeat it for several
          --tcp <port | host:port> Serve a raw TCP service instead (or too, with --backend)
          --basic-auth <user:pw>   Ask visitors for a password
          --ca-certificate <pem>   Trust a server's self-made certificate
          --inspect-url <url>      See and replay the requests in a browser, e.g. http://127.0.0.1:4040
          --environment <name>     Development loads appsettings.Development.json (dev token)
          --help-all               Every setting: appsettings key, environment variable and option
          --version                Show the version

        Exit codes: 0 stopped normally; 2 unknown option, invalid configuration, or a port already in use;
          3 the server refused the login for good (the log line says why and what to do); 4 the server's TLS certificate was refused.
        """;

    /// <summary>What --help and --help-all print.</summary>
    public static readonly ProgramHelp Help = new(ShortHelpText, HelpText);
}
