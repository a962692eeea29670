using Tunnel2.Hosting;
namespace Tunnel2.TestBackend.Configuration;

/// <summary>Backend-specific switches, read from the <c>TestBackend</c> and <c>Serilog</c> sections.</summary>
internal sealed class TestBackendSettings
{
    public const string RequestLoggingKey = "TestBackend:RequestLogging";
    public const string LogFormatKey = "Serilog:Formatter";
    public const string ListenBacklogKey = "TestBackend:ListenBacklog";

    /// <summary>Where the backend listens when no other source names an address (<see cref="NamesListenAddress"/>).</summary>
    public const string DefaultUrl = "http://127.0.0.1:12007";

    /// <summary>Kestrel's own default listen queue.</summary>
    public const int DefaultListenBacklog = 512;

    /// <summary>One log line per request (UseSerilogRequestLogging). Off by default: it would dominate a load test.</summary>
    public bool RequestLogging { get; init; }

    public LogFormat LogFormat { get; init; } = LogFormat.Text;

    /// <summary>
    /// The listen queue (bounded by net.core.somaxconn). A proxy in front opens one connection per caller, so a crowd
    /// of thousands arriving at once overflows Kestrel's 512 and the rest wait for SYN retransmissions (1, 3, 7 s...).
    /// </summary>
    public int ListenBacklog { get; init; } = DefaultListenBacklog;

    /// <summary>
    /// True when the configuration already says where to listen: <c>--urls</c>, ASPNETCORE_URLS,
    /// DOTNET_URLS and URLS all end up in the <c>urls</c> key; <c>Kestrel:Endpoints</c> counts too.
    /// ASPNETCORE_HTTP_PORTS deliberately does not: the official container images set it to 8080,
    /// which would silently move the backend off its documented port.
    /// </summary>
    public static bool NamesListenAddress(IConfiguration configuration) =>
        !string.IsNullOrWhiteSpace(configuration["urls"])
        || configuration.GetSection("Kestrel:Endpoints").GetChildren().Any();

    public static TestBackendSettings Load(IConfiguration configuration)
    {
        var requestLogging = false;
        var rawRequestLogging = configuration[RequestLoggingKey];
        if (!string.IsNullOrWhiteSpace(rawRequestLogging) && !bool.TryParse(rawRequestLogging, out requestLogging))
        {
            throw new InvalidConfigurationException(
                $"{RequestLoggingKey} must be true or false, got '{rawRequestLogging}'.");
        }

        int backlog = DefaultListenBacklog;
        string? rawBacklog = configuration[ListenBacklogKey];
        if (!string.IsNullOrWhiteSpace(rawBacklog)
            && (!int.TryParse(rawBacklog, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out backlog) || backlog is < 1 or > 65535))
        {
            throw new InvalidConfigurationException($"{ListenBacklogKey} must be a whole number from 1 to 65535, got '{rawBacklog}'.");
        }

        return new TestBackendSettings
        {
            RequestLogging = requestLogging,
            ListenBacklog = backlog,
            LogFormat = ParseLogFormat(configuration[LogFormatKey]),
        };
    }

    private static LogFormat ParseLogFormat(string? raw)
    {
        if (string.IsNullOrWhiteSpace(raw))
        {
            return LogFormat.Text;
        }

        return raw.Trim().ToLowerInvariant() switch
        {
            "text" or "plain" => LogFormat.Text,
            "compact" or "json" or "clef" => LogFormat.Compact,
            _ => throw new InvalidConfigurationException(
                $"{LogFormatKey} must be 'text' or 'compact' (compact JSON), got '{raw}'."),
        };
    }
}

internal enum LogFormat
{
    Text,
    Compact,
}
