using Microsoft.Extensions.DependencyInjection;
using OpenTelemetry.Metrics;

namespace Tunnel2.Hosting.Admin;

/// <summary>
/// Collects the process's instruments for the admin listener's <c>/metrics</c>: the tunnel's own meters, ASP.NET Core's
/// and Kestrel's (<c>http.server.request.duration</c>, connections) and the .NET runtime's. Registered only when an
/// admin listener is configured, so a process without one runs no collector at all.
/// </summary>
public static class AdminTelemetry
{
    /// <summary>The meters every Tunnel2 process exports besides its own.</summary>
    public static readonly string[] CommonMeters =
    [
        "Tunnel2.Uplink",
        "Microsoft.AspNetCore.Hosting",
        "Microsoft.AspNetCore.Server.Kestrel",
        "System.Runtime",
    ];

    public static IServiceCollection AddAdminMetrics(this IServiceCollection services, params string[] meters)
    {
        services.AddOpenTelemetry().WithMetrics(metrics => metrics
            .AddMeter(meters)
            .AddMeter(CommonMeters)
            .AddPrometheusExporter());
        return services;
    }
}
