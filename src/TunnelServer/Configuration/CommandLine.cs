using Tunnel2.Hosting;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>The server's command-line switches and its --help text.</summary>
public static partial class CommandLine
{
    public static readonly Dictionary<string, string> SwitchMappings = new(StringComparer.Ordinal)
    {
        ["--public-url"] = "TunnelServer:Listeners:PublicUrl",
        ["--tunnel-url"] = "TunnelServer:Listeners:TunnelUrl",
        ["--token"] = "TunnelServer:Token",
        ["--credentials"] = "TunnelServer:CredentialsFile",
        ["--trusted-proxy"] = "ProxyEntry:TrustedProxies:0",
        ["--client-policies"] = "TunnelServer:ClientVisitorPolicies",
        ["--public-h2c-url"] = "TunnelServer:Listeners:PublicH2cUrl",
        ["--admin-url"] = "TunnelServer:Admin:Url",
        ["--admin-token"] = "TunnelServer:Admin:Token",
        ["--certificate-ask"] = "TunnelServer:Admin:CertificateAsk",
        ["--node-name"] = "TunnelServer:Cluster:NodeName",
        ["--node-header"] = "TunnelServer:Cluster:NodeHeader",
        ["--certificate"] = "TunnelServer:Tls:Certificate",
        ["--certificate-key"] = "TunnelServer:Tls:CertificateKey",
        ["--response-timeout"] = "TunnelServer:Uplink:ResponseHeadTimeout",
        ["--drain-timeout"] = "TunnelServer:DrainTimeout",
        ["--warm-up"] = "ProxyEntry:WarmUp",
        ["--max-request-headers"] = "ProxyEntry:Limits:MaxRequestHeadersBytes",
        ["--host-suffix"] = "ProxyEntry:Routing:HostSuffix",
        ["--balancing"] = "ProxyEntry:Balancing:Strategy",
        ["--affinity"] = "ProxyEntry:Balancing:Affinity",
        ["--affinity-header"] = "ProxyEntry:Balancing:AffinityHeader",
        ["--tcp-ports"] = "TunnelServer:Tcp:PortRange",
    };

    /// <summary>What the server's command line may hold: its switches and the keys of its sections.</summary>
    public static readonly CommandLineSpec Spec = new CommandLineSpec(SwitchMappings)
        .WithKeys(Keys)
        .WithRenamedKeys(LegacyKeys.Renamed);

    private const string Usage = """
        TunnelServer: accepts Tunnel2 clients' uplinks and forwards public HTTP requests to them.

        Usage: TunnelServer [options]
               TunnelServer hash-token | hash-password   (see Commands below)

        Every setting below is a key of appsettings.json, an environment variable (':' becomes '__', e.g.
        TunnelServer__Uplink__MaxStreams=20000) and a command-line option (--TunnelServer:Uplink:MaxStreams=20000);
        the common ones have a switch too (--public-url <url>). Later sources win: appsettings.json, then the environment,
        then the command line. Keys of an earlier release still work for one more, with a warning naming the new key.

          --environment <name>  Development loads appsettings.Development.json (dev token, debug logs)
          --help, -h            Show the common options
          --help-all            Show every setting (this text)
          --version             Show the version

        """;

    private const string Footer = """
        Commands (print a hash for the credentials file, reading the secret from standard input):
          TunnelServer hash-token        sha256:… for a client token or a visitor API key
          TunnelServer hash-password     a bcrypt hash for a visitor's basic-auth password (htpasswd -nbB works too)

        Public requests:  ANY http(s)://<public>/session/{id}/{path}  ->  the backend of the client serving {id}
                          ANY http(s)://{id}.<host-suffix>/{path}      ->  the same, path unchanged
        TCP sessions:     <bind address>:<the session's port>  ->  the --tcp target of the clients serving it
        Uplinks:          GET http(s)://<tunnel>/tunnel2/connect with Upgrade: tunnel2 (see docs/protocol.md)
        Health:           GET http(s)://<public>/healthz

        Exit codes: 0 stopped normally (after the drain); 2 unknown option, invalid configuration, or a port already in use.
        """;

    /// <summary>The --help-all text: how to run it, every setting (<see cref="Settings"/>, generated from the options), and the rest.</summary>
    public const string HelpText = Usage + "\n" + Settings + "\n\n" + Footer;

    /// <summary>The --help text: the usage and the options most runs need.</summary>
    public const string ShortHelpText = """
        TunnelServer: accepts Tunnel2 clients' uplinks and forwards public HTTP requests to them.

        Usage: TunnelServer --token <token> [options]
               TunnelServer hash-token | hash-password   (a hash for the credentials file; see --help-all)

        Common options:
          --public-url <url>       Where visitors connect [default http://127.0.0.1:12000]; http://0.0.0.0:12000
                                   takes every interface (use https:// and --certificate there)
          --tunnel-url <url>       Where clients connect, their --server [default http://127.0.0.1:12001]
          --token <token>          The token every client presents; or --credentials <file>, one per client
          --certificate <pem>      TLS for https:// URLs, with --certificate-key <pem>
          --host-suffix <domain>   Serve sessions as {id}.<domain> too
          --tcp-ports <from-to>    Public TCP ports for TCP sessions (tunnel2 tcp …), e.g. 20000-20099
          --admin-url <url>        The admin API, /metrics and the dashboard, with --admin-token <token>
          --environment <name>     Development loads appsettings.Development.json (dev token, debug logs)
          --help-all               Every setting: appsettings key, environment variable and option
          --version                Show the version

        Exit codes: 0 stopped normally (after the drain); 2 unknown option, invalid configuration, or a port already in use.
        """;

    /// <summary>What --help and --help-all print.</summary>
    public static readonly ProgramHelp Help = new(ShortHelpText, HelpText);
}
