using System.Globalization;
using Serilog;
using Serilog.Formatting.Compact;
using Tunnel2.TestBackend.Configuration;

namespace Tunnel2.TestBackend.Diagnostics;

/// <summary>
/// Serilog for one host: levels and any extra sinks come from the <c>Serilog</c> section, the console
/// sink is added here in the format <c>Serilog:Formatter</c> asks for.
/// </summary>
internal static class LoggingSetup
{
    private const string TextTemplate = "[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:lj}{NewLine}{Exception}";

    public static void Configure(LoggerConfiguration logger, IServiceProvider services, LogFormat format)
    {
        logger.ReadFrom.Configuration(services.GetRequiredService<IConfiguration>())
            .ReadFrom.Services(services)
            .Enrich.FromLogContext();

        if (format == LogFormat.Compact)
        {
            logger.WriteTo.Console(new CompactJsonFormatter());
        }
        else
        {
            logger.WriteTo.Console(outputTemplate: TextTemplate, formatProvider: CultureInfo.InvariantCulture);
        }
    }
}
