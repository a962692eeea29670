using System.Globalization;
using Serilog;
using Serilog.Formatting.Compact;
using Tunnel2.TestBackend.Configuration;

namespace Tunnel2.TestBackend;

/// <summary>
/// Serilog for one host: levels (and any sinks) come from the <c>Serilog</c> section; when that section
/// names no sink, a console sink is added in the format <c>Serilog:Formatter</c> asks for.
/// </summary>
internal static class LoggingSetup
{
    private const string TextTemplate = "[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:lj}{NewLine}{Exception}";

    public static void Configure(LoggerConfiguration logger, IServiceProvider services, LogFormat format)
    {
        var configuration = services.GetRequiredService<IConfiguration>();
        logger.ReadFrom.Configuration(configuration)
            .ReadFrom.Services(services)
            .Enrich.FromLogContext();

        // Sinks in configuration mean the operator took control of them. This also avoids writing every
        // line twice when a test project's output folder holds another project's appsettings.json.
        if (configuration.GetSection("Serilog:WriteTo").GetChildren().Any())
        {
            return;
        }

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
