using Tunnel2.Hosting;
namespace Tunnel2.TestBackend.Configuration;

/// <summary>Backend-specific switches, read from the <c>TestBackend</c> and <c>Serilog</c> sections.</summary>
internal sealed class TestBackendSettings
{
    public const string RequestLoggingKey = "TestBackend:RequestLogging";
    public const string LogFormatKey = "Serilog:Formatter";

    /// <summary>One log line per request (UseSerilogRequestLogging). Off by default: it would dominate a load test.</summary>
    public bool RequestLogging { get; init; }

    public LogFormat LogFormat { get; init; } = LogFormat.Text;

    public static TestBackendSettings Load(IConfiguration configuration)
    {
        var requestLogging = false;
        var rawRequestLogging = configuration[RequestLoggingKey];
        if (!string.IsNullOrWhiteSpace(rawRequestLogging) && !bool.TryParse(rawRequestLogging, out requestLogging))
        {
            throw new InvalidConfigurationException(
                $"{RequestLoggingKey} must be true or false, got '{rawRequestLogging}'.");
        }

        return new TestBackendSettings
        {
            RequestLogging = requestLogging,
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
