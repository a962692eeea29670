using System.Text;
using Tunnel2.Hosting;
using Tunnel2.TestBackend.Endpoints;

namespace Tunnel2.TestBackend.Configuration;

internal static class CommandLineHelp
{
    public static string Text { get; } = Build();

    /// <summary>
    /// What the command line may hold: <c>--urls</c>, <c>TestBackend:RequestLogging</c>, and Kestrel's, Serilog's and the
    /// host's own keys (no switches of its own).
    /// </summary>
    public static CommandLineSpec Spec { get; } = new CommandLineSpec(new Dictionary<string, string>())
        .WithKey("urls")
        .WithSection("TestBackend", TestBackendSettings.RequestLoggingKey["TestBackend:".Length..], TestBackendSettings.ListenBacklogKey["TestBackend:".Length..]);

    private static string Build()
    {
        var text = new StringBuilder();
        text.AppendLine("TestBackend - Kestrel backend tuned for load tests (Tunnel2)");
        text.AppendLine();
        text.AppendLine("Usage: TestBackend [--urls <url>] [--Section:Key=value ...]");
        text.AppendLine();
        text.AppendLine("Endpoints:");
        foreach (var endpoint in EndpointCatalog.All)
        {
            text.Append("  ").Append(endpoint.Method.PadRight(5)).Append(endpoint.Path.PadRight(26))
                .AppendLine(endpoint.Description);
        }

        text.AppendLine();
        text.AppendLine("Options (command line, or the same keys in appsettings.json / environment):");
        AppendRows(text,
        [
            ("--urls <url>", $"Listen address(es), ';'-separated. Default {TestBackendSettings.DefaultUrl}."),
            ("--Kestrel:Limits:MaxConcurrentConnections=<n>", "Default 10000."),
            ("--Kestrel:Limits:MaxConcurrentUpgradedConnections=<n>", "Default 10000."),
            ("--Kestrel:Limits:KeepAliveTimeout=<hh:mm:ss>", "Default 00:02:00."),
            ("--Kestrel:Limits:MaxRequestBufferSize=<bytes>", "Default 1048576 (1 MiB)."),
            ($"--{TestBackendSettings.RequestLoggingKey}=<true|false>", "One log line per request. Default false."),
            ($"--{TestBackendSettings.ListenBacklogKey}=<n>", $"Listen queue, up to net.core.somaxconn. Default {TestBackendSettings.DefaultListenBacklog}."),
            ($"--{TestBackendSettings.LogFormatKey}=<text|compact>", "Console log format; compact = Serilog compact JSON. Default text."),
            ("--Serilog:MinimumLevel:Default=<level>", "Verbose, Debug, Information (default), Warning, Error."),
            ("--environment <name>", "ASP.NET Core environment. Default Production."),
            ("-h, --help", "Print this help and exit."),
        ]);
        text.AppendLine();
        text.AppendLine("Environment variables:");
        AppendRows(text,
        [
            ("ASPNETCORE_URLS, DOTNET_URLS, URLS", "Listen address(es), as --urls."),
            ("Kestrel__Limits__<Name>", "As --Kestrel:Limits:<Name>."),
            ("TestBackend__RequestLogging", "As --TestBackend:RequestLogging."),
            ("TestBackend__ListenBacklog", "As --TestBackend:ListenBacklog."),
            ("Serilog__Formatter", "As --Serilog:Formatter."),
            ("Serilog__MinimumLevel__Default", "As --Serilog:MinimumLevel:Default."),
            ("ASPNETCORE_ENVIRONMENT", "As --environment."),
        ]);
        text.AppendLine("  ASPNETCORE_HTTP_PORTS does not replace the default address (container images set it); use ASPNETCORE_URLS.");
        text.AppendLine();
        text.AppendLine("Exit codes: 0 normal shutdown or --help, 2 unknown option or invalid configuration, 1 unexpected failure.");
        return text.ToString();
    }

    private static void AppendRows(StringBuilder text, (string Name, string Description)[] rows)
    {
        var width = 0;
        foreach (var (name, _) in rows)
        {
            width = Math.Max(width, name.Length);
        }

        foreach (var (name, description) in rows)
        {
            text.Append("  ").Append(name.PadRight(width + 2)).AppendLine(description);
        }
    }
}
