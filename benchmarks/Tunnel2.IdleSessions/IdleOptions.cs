using System.Globalization;

namespace Tunnel2.IdleSessions;

/// <summary>The tool's command line.</summary>
internal sealed record IdleOptions
{
    public Uri Server { get; init; } = new("http://127.0.0.1:12001");

    public string Token { get; init; } = Environment.GetEnvironmentVariable("TUNNEL2_TOKEN") is { Length: > 0 } token ? token : "dev-token-change-me";

    public int Sessions { get; init; } = 1000;

    public string SessionPrefix { get; init; } = $"idle-{Environment.ProcessId}-";

    public int ConnectParallelism { get; init; } = 32;

    /// <summary>How long to keep the uplinks open once connected; zero means until SIGTERM/Ctrl+C.</summary>
    public TimeSpan Hold { get; init; } = TimeSpan.Zero;

    public TimeSpan ReportInterval { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>A process (the TunnelServer) whose VmRSS is read from /proc before connecting and while idle.</summary>
    public int? ServerPid { get; init; }

    /// <summary>Written (count of open uplinks) once every uplink is connected.</summary>
    public string? ReadyFile { get; init; }

    public const string HelpText = """
        Tunnel2.IdleSessions: opens N idle uplinks to a running TunnelServer and keeps them open.

        Each uplink is a real login (TunnelClient's UplinkDialer: HTTP/1.1 Upgrade, bearer token, its own
        Tunnel2-Session) running a real Uplink, so the server's keep-alive pings are answered and nothing else
        is sent. No requests are made. Measures connect time and whether every uplink stays up; with --server-pid
        it also reads the server's VmRSS before connecting and while the uplinks are idle, and prints KB per
        session. (tunnel2-load-tests/scripts/idle-sessions.sh starts a server and does the full measurement.)

        Usage: Tunnel2.IdleSessions [options]

        Options:
          --server <url>          The server's tunnel endpoint                  [default http://127.0.0.1:12001]
          --token <token>         Bearer token (or env TUNNEL2_TOKEN)           [default the dev token]
          --sessions <n>          Uplinks to open, each its own session id      [default 1000]
          --session-prefix <p>    Session ids are <p>00001 ... <p>N             [default idle-<pid>-]
          --parallel <n>          Logins in flight at once                      [default 32]
          --hold <seconds>        Keep the uplinks this long, then close them; 0 = until SIGTERM/Ctrl+C [default 0]
          --report-every <s>      Print a status line this often while idle     [default 10]
          --server-pid <pid>      Read this process's VmRSS (/proc) before and while idle
          --ready-file <path>     Write the number of open uplinks here once all logins are done
          --help, -h              Show this help

        Exit codes: 0 every uplink connected and stayed up; 1 a login failed or an uplink dropped; 2 bad usage.
        """;

    /// <exception cref="ArgumentException">An option is unknown or its value invalid.</exception>
    public static IdleOptions Parse(string[] args)
    {
        var options = new IdleOptions();
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            string Value() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{name} needs a value.");
            options = name switch
            {
                "--server" => options with { Server = ParseUri(name, Value()) },
                "--token" => options with { Token = Value() },
                "--sessions" => options with { Sessions = ParseInt(name, Value(), 1, 100_000) },
                "--session-prefix" => options with { SessionPrefix = Value() },
                "--parallel" => options with { ConnectParallelism = ParseInt(name, Value(), 1, 1000) },
                "--hold" => options with { Hold = TimeSpan.FromSeconds(ParseInt(name, Value(), 0, 86_400)) },
                "--report-every" => options with { ReportInterval = TimeSpan.FromSeconds(ParseInt(name, Value(), 1, 3600)) },
                "--server-pid" => options with { ServerPid = ParseInt(name, Value(), 1, int.MaxValue) },
                "--ready-file" => options with { ReadyFile = Value() },
                _ => throw new ArgumentException($"Unknown option '{name}'."),
            };
        }

        if (options.Token.Length == 0)
        {
            throw new ArgumentException("--token must not be empty.");
        }

        return options;
    }

    private static int ParseInt(string name, string text, int min, int max) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int value) && value >= min && value <= max
            ? value
            : throw new ArgumentException($"{name} must be a whole number from {min} to {max}, not '{text}'.");

    private static Uri ParseUri(string name, string text) =>
        Uri.TryCreate(text, UriKind.Absolute, out Uri? uri) && (uri.Scheme == Uri.UriSchemeHttp || uri.Scheme == Uri.UriSchemeHttps)
            ? uri
            : throw new ArgumentException($"{name} must be an http:// URL, not '{text}'.");
}
