using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.HttpOverrides;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Admission;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Forwarding.Retry;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.ProxyEntry.Upgrades;

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
        services.AddSingleton<IValidateOptions<ProxyEntryOptions>, ProxyEntryOptionsValidator>();
        services.AddSingleton(provider =>
        {
            ProxyEntryOptions options = provider.GetRequiredService<IOptions<ProxyEntryOptions>>().Value;
            return new HostRouter(options.Routing.HostSuffix, SessionEntries.Hosts(options.Routing, options.Sessions));
        });
        services.AddMetrics();
        services.AddSingleton(provider =>
        {
            ProxyEntryOptions options = provider.GetRequiredService<IOptions<ProxyEntryOptions>>().Value;
            return new SessionPolicies(options.Balancing, options.SessionDefaults, options.Sessions);
        });
        services.AddSingleton<SessionRegistry>();
        services.AddSingleton<PublicDrain>();
        services.AddSingleton<NodeWarmUp>();
        services.AddSingleton<ProxyEntryMetrics>();
        services.AddSingleton<VisitorAccess>();
        AddRequestPath(services);
        services.AddSingleton(provider => new PublicRateLimits(provider.GetRequiredService<IOptions<ProxyEntryOptions>>().Value.RateLimits,
            provider.GetRequiredService<SessionRegistry>().Policies));
        services.AddRateLimiter(_ => { });
        services.AddOptions<Microsoft.AspNetCore.RateLimiting.RateLimiterOptions>()
            .Configure<PublicRateLimits, ILoggerFactory, ExchangeEntry>((limiter, limits, loggers, entry) =>
                limits.Configure(limiter, loggers.CreateLogger<PublicRateLimits>(), entry.Leave));
        services.AddOptions<ForwardedHeadersOptions>().Configure<IOptions<ProxyEntryOptions>>((forwarded, proxy) =>
        {
            // The scheme too: behind an edge that terminates TLS (Caddy, HAProxy) the visitor came over https, and the
            // login's redirect URI and its cookies' Secure flag follow the request's scheme. Only from trusted proxies.
            forwarded.ForwardedHeaders = ForwardedHeaders.XForwardedFor | ForwardedHeaders.XForwardedProto;
            forwarded.ForwardLimit = null; // walk back through every trusted proxy to the first address that is not one
            forwarded.KnownProxies.Clear();
            forwarded.KnownIPNetworks.Clear();
            foreach (System.Net.IPNetwork trusted in proxy.Value.ParseTrustedProxies().Networks)
            {
                forwarded.KnownIPNetworks.Add(trusted);
            }
        });
        return services;
    }

    /// <summary>The steps of the public request path, in their order, and what runs them (<see cref="TunnelForwarder"/>).</summary>
    private static void AddRequestPath(IServiceCollection services)
    {
        services.AddSingleton<FailureResponder>();
        services.AddSingleton<ExchangeAdmission>();
        services.AddSingleton<UplinkPicker>();
        services.AddSingleton<HeldBackUploads>();
        services.AddSingleton<RequestBodyPump>();
        services.AddSingleton<UpgradeRelay>();
        services.AddSingleton<ForwardAttempt>();
        services.AddSingleton<PassiveHealth>();
        services.AddSingleton<RetryPolicy>();
        services.AddSingleton<ProxyExchangePool>();
        services.AddSingleton<ExchangeEntry>();
        services.AddSingleton<TunnelForwarder>();
    }

    /// <summary>
    /// Forwards every request on a session's host name (<see cref="HostRouter"/>), whatever its path, and on any other
    /// host every request under <c>/session/</c>; everything else goes on down the pipeline. The request is routed once,
    /// here, before the rate limiter, and its session's policy read once (<see cref="ExchangeEntry"/>): both travel in
    /// its pooled exchange, its feature, which the rate limiter and the forwarder read.
    /// </summary>
    public static IApplicationBuilder UseProxyEntry(this IApplicationBuilder app)
    {
        TunnelForwarder forwarder = app.ApplicationServices.GetRequiredService<TunnelForwarder>();
        ExchangeEntry entry = app.ApplicationServices.GetRequiredService<ExchangeEntry>();
        if (app.ApplicationServices.GetRequiredService<IOptions<ProxyEntryOptions>>().Value.TrustedProxies.Count > 0)
        {
            app.UseForwardedHeaders();
        }

        app.Use(next => context =>
        {
            entry.Enter(context);
            return next(context);
        });
        if (app.ApplicationServices.GetRequiredService<PublicRateLimits>().IsOn)
        {
            app.UseRateLimiter();
        }

        return app.Use(next => context => context.Features.Get<ProxyExchange>() is { } exchange ? forwarder.ForwardAsync(exchange) : next(context));
    }
}
