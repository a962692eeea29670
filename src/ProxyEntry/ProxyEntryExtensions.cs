using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry;

public static class ProxyEntryExtensions
{
    /// <summary>Registers the session registry, the forwarder and their options (section <c>ProxyEntry</c>).</summary>
    public static IServiceCollection AddProxyEntry(this IServiceCollection services, IConfiguration configuration)
    {
        services.AddOptions<ProxyEntryOptions>()
            .Bind(configuration.GetSection(ProxyEntryOptions.SectionName))
            .ValidateOnStart();
        services.AddSingleton<IValidateOptions<ProxyEntryOptions>, ProxyEntryOptionsAnnotations>();
        services.AddMetrics();
        services.AddSingleton<SessionRegistry>();
        services.AddSingleton<PublicDrain>();
        services.AddSingleton<ProxyEntryMetrics>();
        services.AddSingleton<TunnelForwarder>();
        return services;
    }

    /// <summary>Forwards every request under <c>/session/</c>; everything else goes on down the pipeline.</summary>
    public static IApplicationBuilder UseProxyEntry(this IApplicationBuilder app)
    {
        TunnelForwarder forwarder = app.ApplicationServices.GetRequiredService<TunnelForwarder>();
        return app.Use(next => context =>
            context.Request.Path.StartsWithSegments("/session", StringComparison.Ordinal)
                ? forwarder.ForwardAsync(context)
                : next(context));
    }
}
