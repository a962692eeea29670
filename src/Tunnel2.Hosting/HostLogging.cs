using System.Runtime.CompilerServices;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Serilog;
using Serilog.Formatting.Compact;
using Serilog.Settings.Configuration;

namespace Tunnel2.Hosting;

/// <summary>Serilog for a host, configured from its <c>Serilog</c> section (appsettings, environment, command line).</summary>
public static class HostLogging
{
    /// <summary>
    /// Adds Serilog as the host's logger, read from <paramref name="configuration"/> and enriched from the log context.
    /// Each host keeps its own logger: with the static <see cref="Log.Logger"/>, loggers created late (one per uplink)
    /// would write to whichever host in the process set it last, and tests run several hosts in one process.
    /// A start that fails on a port in use is not logged with its stack trace: <see cref="ProgramHost"/> says it in one line.
    /// </summary>
    public static IServiceCollection AddHostSerilog(this IServiceCollection services, IConfiguration configuration) =>
        services.AddSerilog((_, logger) => ReadSettings(logger, configuration).Enrich.FromLogContext()
            .Filter.ByExcluding(e => ListenerOptions.IsAddressInUse(e.Exception)), preserveStaticLogger: true);

    // A JIT build finds the sinks that appsettings names (Serilog:Using) among the assemblies on disk. A Native AOT
    // build has none on disk: it looks them up in the sink and formatter assemblies compiled into it.
    private static LoggerConfiguration ReadSettings(LoggerConfiguration logger, IConfiguration configuration) =>
        RuntimeFeature.IsDynamicCodeSupported
            ? logger.ReadFrom.Configuration(configuration)
            : logger.ReadFrom.Configuration(configuration,
                new ConfigurationReaderOptions(typeof(ConsoleLoggerConfigurationExtensions).Assembly, typeof(CompactJsonFormatter).Assembly));
}
