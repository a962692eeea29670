using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

namespace Tunnel2.Hosting.Admin;

/// <summary>
/// Sends the process's spans to an OpenTelemetry collector over OTLP when the standard <c>OTEL_EXPORTER_OTLP_ENDPOINT</c>
/// is set (environment, appsettings or command line; <c>OTEL_EXPORTER_OTLP_PROTOCOL</c>, <c>OTEL_SERVICE_NAME</c> and
/// the other standard variables apply as the SDK defines them). Without it nothing listens to the sources, and
/// starting a span costs a null check.
/// </summary>
public static class TracingExport
{
    public const string EndpointKey = "OTEL_EXPORTER_OTLP_ENDPOINT";

    public static IServiceCollection AddTracingExport(this IServiceCollection services, IConfiguration configuration, string serviceName,
        params string[] sources)
    {
        if (string.IsNullOrEmpty(configuration[EndpointKey]))
        {
            return services;
        }

        services.AddOpenTelemetry()
            .ConfigureResource(resource => resource.AddService(serviceName))
            .WithTracing(tracing => tracing.AddSource(sources).AddOtlpExporter());
        return services;
    }
}
