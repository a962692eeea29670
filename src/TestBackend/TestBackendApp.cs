using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Serilog;
using Tunnel2.Hosting;
using Tunnel2.TestBackend.Configuration;
using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.TestBackend.Endpoints;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend;

/// <summary>
/// Builds the load-test backend. Program.cs runs it; tests host it in-process:
/// <code>
/// var app = TestBackendApp.Create(["--urls", "http://127.0.0.1:0"]);
/// await app.StartAsync();
/// var address = app.Services.GetRequiredService&lt;IServer&gt;().Features.Get&lt;IServerAddressesFeature&gt;()!.Addresses.First();
/// </code>
/// Several apps may live in one process: each has its own Serilog logger, and the static
/// <see cref="Log.Logger"/> is left alone.
/// </summary>
public static class TestBackendApp
{
    /// <summary>
    /// Returns the fully configured app (routes, Kestrel limits, logging), not started.
    /// Throws <see cref="InvalidConfigurationException"/> when a setting is invalid.
    /// </summary>
    public static WebApplication Create(string[] args)
    {
        var builder = WebApplication.CreateBuilder(new WebApplicationOptions
        {
            Args = args,

            // Find appsettings.json next to the binary, whatever the working directory.
            ContentRootPath = AppContext.BaseDirectory,
        });

        var limits = KestrelLimitsSettings.Load(builder.Configuration);
        var settings = TestBackendSettings.Load(builder.Configuration);

        if (!TestBackendSettings.NamesListenAddress(builder.Configuration))
        {
            builder.WebHost.UseUrls(TestBackendSettings.DefaultUrl);
        }

        builder.WebHost.UseSockets(sockets => sockets.Backlog = settings.ListenBacklog);
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            kestrel.AllowSynchronousIO = false;
            limits.ApplyTo(kestrel.Limits);
        });

        builder.Services.AddSingleton<DelayStatistics>();
        builder.Services.AddSerilog(
            (services, logger) => LoggingSetup.Configure(logger, services, settings.LogFormat),
            preserveStaticLogger: true);

        var app = builder.Build();
        if (settings.RequestLogging)
        {
            // Without an explicit logger the middleware writes to the static Log.Logger, not this host's.
            var hostLogger = app.Services.GetRequiredService<Serilog.ILogger>();
            app.UseSerilogRequestLogging(options => options.Logger = hostLogger);
        }

        app.Use(ProblemStatusMiddleware.Create);
        app.UseWebSockets();
        app.MapLoadTestEndpoints();
        LogWhenStarted(app, limits, settings);
        return app;
    }

    private static void LogWhenStarted(WebApplication app, KestrelLimitsSettings limits, TestBackendSettings settings)
    {
        var logger = app.Services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(TestBackendApp).FullName!);
        app.Lifetime.ApplicationStarted.Register(() =>
        {
            var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()?.Addresses;
            BackendLog.Started(
                logger,
                addresses is null ? "(unknown)" : string.Join(", ", addresses),
                limits.MaxConcurrentConnections,
                limits.KeepAliveTimeout,
                limits.MaxRequestBufferSize,
                settings.RequestLogging);
        });
    }
}
