using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Options;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using Tunnel2.Hosting;
using Tunnel2.Hosting.Admin;
using Tunnel2.Hosting.Configuration;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.Hosting.Sockets;
using Tunnel2.TunnelServer.Admin;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Diagnostics;
using Tunnel2.TunnelServer.Edge;
using Tunnel2.TunnelServer.Hosting;
using Tunnel2.TunnelServer.Hosting.LoopTransport;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Tls;
using Tunnel2.TunnelServer.Uplinks;

namespace Tunnel2.TunnelServer;

/// <summary>Builds the server: Kestrel on the public port (ProxyEntry), and the tunnel port's own listener (uplinks).</summary>
public static class TunnelServerApp
{
    /// <exception cref="OptionsValidationException">The configuration is invalid; the message says what to fix.</exception>
    public static WebApplication Create(string[] args)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions
        {
            Args = args,
            ContentRootPath = AppContext.BaseDirectory, // appsettings.json beside the binary, whatever the working directory
        });
        builder.Configuration.AddCommandLine(args, CommandLine.SwitchMappings);
        IReadOnlyList<KeyValuePair<string, string>> renamed = LegacyKeys.Renamed.Apply(builder.Configuration);

        TunnelServerOptions options = BindAndValidate(builder.Configuration);
        // Every log event carries the node's name (structured sinks show it; the console template may add {Node}).
        builder.Configuration.AddInMemoryCollection([new("Serilog:Properties:Node", options.Cluster.ResolvedNodeName)]);
        Tunnel2.Protocol.Buffers.BufferPools.SetTrimPeriod(options.Uplink.BufferTrimPeriod); // the pools are the process's

        AddCoreServices(builder.Services, builder.Configuration);
        if (options.Public.IsLoop)
        {
            OffLoopLogging.Use(builder.Services); // Kestrel and ProxyEntry log on the loop: written off it
        }

        builder.Services.AddSingleton(ListenersOf(options));
        AddAdminServices(builder.Services, options);
        AddSecurityServices(builder.Services, options);
        AddUplinkAndShutdownServices(builder.Services, options);
        UseListenSockets(builder.WebHost, options);
        ServerEndpoints endpoints = ConfigureListeners(builder, options);

        WebApplication app = builder.Build();
        RenamedKeys.LogWarnings(app.Services, renamed);
        // Read now, not at the first login: the file's visitor rules must guard the public port from its first request.
        _ = app.Services.GetService<CredentialsFile>();
        UsePipeline(app, options, endpoints);
        app.UseRouting();
        NodeWarmUp warmUp = MapHealthAndFallback(app, options, endpoints);
        LogWhenStarted(app, options, endpoints, warmUp);
        return app;
    }

    /// <summary>The listeners by the option that sets each, so that a port in use names it.</summary>
    private static ListenerOptions ListenersOf(TunnelServerOptions options) => new(
        new (string Option, string? Url)[]
        {
            ("--public-url", options.Listeners.PublicUrl), ("--tunnel-url", options.Listeners.TunnelUrl),
            ("--public-h2c-url", options.Listeners.PublicH2cUrl), ("--admin-url", options.Admin.Url),
        }.Where(listener => !string.IsNullOrEmpty(listener.Url)).Select(listener => KeyValuePair.Create(listener.Option, listener.Url!)).ToList());

    /// <summary>Logging, the options with their validators (in the order their failures are listed), ProxyEntry, metrics and tracing.</summary>
    private static void AddCoreServices(IServiceCollection services, IConfiguration configuration)
    {
        services.AddHostSerilog(configuration);
        services.AddOptions<TunnelServerOptions>()
            .Bind(configuration.GetSection(TunnelServerOptions.SectionName))
            .ValidateOnStart();
        services.AddSingleton<IValidateOptions<TunnelServerOptions>, TunnelServerOptionsAnnotations>();
        services.AddSingleton<IValidateOptions<TunnelServerOptions>, TunnelServerOptionsValidator>();
        services.AddSingleton<IValidateOptions<TunnelServerOptions>, Tunnel2.TunnelServer.Tcp.TcpServerOptionsValidator>();
        services.AddProxyEntry(configuration);
        services.AddSingleton<TunnelServerMetrics>();
        services.AddTracingExport(configuration, "TunnelServer", ProxyEntryTracing.SourceName, "Microsoft.AspNetCore");
    }

    /// <summary>With an admin listener: its metrics, OpenAPI document, live traffic charts and JSON contract.</summary>
    private static void AddAdminServices(IServiceCollection services, TunnelServerOptions options)
    {
        if (string.IsNullOrEmpty(options.Admin.Url))
        {
            return;
        }

        services.AddAdminMetrics(ProxyEntryMetrics.MeterName, ServerMeter.Name);
        services.ConfigureOpenTelemetryMeterProvider(metrics => metrics.ConfigureResource(resource =>
            resource.AddService("TunnelServer", serviceInstanceId: options.Cluster.ResolvedNodeName)));
        services.AddOpenApi();
        services.AddSingleton<LiveTraffic>();
        services.ConfigureHttpJsonOptions(json => json.SerializerOptions.TypeInfoResolverChain.Insert(0, AdminJsonContext.Default));
    }

    /// <summary>The TLS certificate, the credentials file, the certificate ask, and who may open an uplink.</summary>
    private static void AddSecurityServices(IServiceCollection services, TunnelServerOptions options)
    {
        if (!string.IsNullOrEmpty(options.Tls.Certificate))
        {
            services.AddSingleton(provider => new ServerCertificate(
                options.Tls.Certificate, options.Tls.CertificateKey!, provider.GetRequiredService<ILogger<ServerCertificate>>()));
        }

        if (!string.IsNullOrEmpty(options.CredentialsFile))
        {
            services.AddSingleton(provider => new CredentialsFile(options.CredentialsFile,
                provider.GetRequiredService<Tunnel2.ProxyEntry.Sessions.SessionPolicies>(), provider.GetRequiredService<ILogger<CredentialsFile>>()));
        }

        if (options.Admin.CertificateAsk)
        {
            services.AddCertificateAsk(options.Token);
        }

        services.AddSingleton(provider => new ClientAuthenticator(options.Token, provider.GetService<CredentialsFile>()));
        services.AddSingleton(provider => new CredentialRevocation(
            provider.GetRequiredService<ILogger<CredentialRevocation>>(), provider.GetService<CredentialsFile>()));
    }

    /// <summary>The tunnel port's listener, the graceful shutdown and its budget, and the public port's read-ahead.</summary>
    private static void AddUplinkAndShutdownServices(IServiceCollection services, TunnelServerOptions options)
    {
        services.AddUplinkAcceptance();
        services.AddHostedService<UplinkListener>();
        services.AddHostedService<GracefulShutdown>();
        services.Configure<HostOptions>(host => host.ShutdownTimeout = HostStop.ShutdownTimeout(options.DrainTimeout));
        services.AddOptions<KestrelServerOptions>().Configure<IOptions<ProxyEntryOptions>>((kestrel, proxy) =>
            PublicReadAhead.Apply(proxy.Value, kestrel.Limits));
        services.AddOptions<SocketTransportOptions>().Configure<IOptions<KestrelServerOptions>>((sockets, kestrel) =>
            PublicReadAhead.Apply(kestrel.Value.Limits, sockets));
        services.AddOptions<KestrelServerOptions>().Configure(kestrel => PublicResponseBuffer.Apply(options.Listeners, kestrel.Limits));
        services.AddOptions<SocketTransportOptions>().Configure(sockets => PublicResponseBuffer.Apply(options.Listeners, sockets));
    }

    /// <summary>
    /// Kestrel's listen sockets get the configured unsent-bytes limit and receive buffer; in the low-latency mode Kestrel
    /// runs a connection's work on the thread that completed its read.
    /// </summary>
    private static void UseListenSockets(IWebHostBuilder webHost, TunnelServerOptions options)
    {
        webHost.UseSockets(sockets => sockets.UnsafePreferInlineScheduling = LowLatencyMode.IsOn);
        // Accepted sockets inherit TCP_NOTSENT_LOWAT from their listener, so one setting covers every caller (and the
        // tunnel port's own listener sets it for the uplinks).
        webHost.UseSockets(sockets => sockets.CreateBoundListenSocket = endpoint => BoundListenSocket(endpoint, options));
        if (options.Public.IsLoop)
        {
            // Beside the socket transport, tried before it: it binds the public plain-HTTP listener's LoopEndPoint only.
            webHost.ConfigureServices(services => services.AddSingleton<IConnectionListenerFactory>(provider =>
                PublicLoopTransport.Create(provider, endpoint => (Socket)BoundListenSocket(endpoint, options), options.Public.LoopReadBudget,
                    options.Public.UpgradesOnLoop)));
        }
    }

    private static Socket BoundListenSocket(EndPoint endpoint, TunnelServerOptions options)
    {
        Socket listener = SocketTransportOptions.CreateDefaultBoundListenSocket(endpoint);
        UnsentBytesLimit.TryApply(listener, options.Listeners.UnsentBytesLimit);
        if (options.Listeners.PublicReceiveBuffer > 0)
        {
            listener.ReceiveBufferSize = options.Listeners.PublicReceiveBuffer;
        }

        return listener;
    }

    /// <summary>Kestrel's limits and listeners (public, public h2c, admin); the endpoints learn their addresses once bound.</summary>
    private static ServerEndpoints ConfigureListeners(WebApplicationBuilder builder, TunnelServerOptions options)
    {
        var endpoints = new ServerEndpoints();
        builder.Services.AddSingleton(endpoints);
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false; // the backend's Server header passes through instead
            kestrel.Limits.MaxRequestBodySize = null; // ProxyEntry applies its own limit per request
            kestrel.Limits.RequestHeadersTimeout = options.Limits.RequestHeadersTimeout;
            endpoints.PublicListener = ListenPublic(kestrel, options, endpoints);
            if (!string.IsNullOrEmpty(options.Listeners.PublicH2cUrl) && ListenAddress.TryParse(options.Listeners.PublicH2cUrl, out ListenAddress? h2c, out _))
            {
                endpoints.PublicH2cListener = ListenH2c(kestrel, h2c);
            }

            if (!string.IsNullOrEmpty(options.Admin.Url) && ListenAddress.TryParse(options.Admin.Url, out ListenAddress? admin, out _))
            {
                ListenOptions? adminListener = null;
                kestrel.Listen(admin.EndPoint, listen => adminListener = listen);
                endpoints.AdminListener = adminListener;
            }
        });
        return endpoints;
    }

    /// <summary>The public h2c listener: HTTP/2 without TLS (prior knowledge).</summary>
    private static ListenOptions? ListenH2c(KestrelServerOptions kestrel, ListenAddress h2c)
    {
        ListenOptions? h2cListener = null;
        kestrel.Listen(h2c.EndPoint, listen =>
        {
            h2cListener = listen;
            listen.Protocols = HttpProtocols.Http2;
        });
        return h2cListener;
    }

    /// <summary>The middleware: with an admin listener, its requests and the public ones take separate branches.</summary>
    private static void UsePipeline(WebApplication app, TunnelServerOptions options, ServerEndpoints endpoints)
    {
        if (endpoints.AdminListener is not null)
        {
            // Requests that arrived on the admin listener never reach ProxyEntry: they pass the admin token and /metrics,
            // then the routes below (the admin API answers only there). A public request pays one port compare.
            app.UseWhen(endpoints.IsAdmin, admin => admin.UseAdminAccess(options.Admin.Token));
            app.UseWhen(context => !endpoints.IsAdmin(context), proxy => proxy.UseNodeHeader(options).UseProxyEntry());
            RouteGroupBuilder adminRoutes = AdminRoutes.Group(app, endpoints);
            AdminApi.Map(adminRoutes);
            if (options.Admin.CertificateAsk)
            {
                CertificateAskEndpoint.Map(adminRoutes);
            }

            _ = app.Services.GetRequiredService<LiveTraffic>(); // listening from the start, so the first minute is in the charts
        }
        else
        {
            // Public requests leave the pipeline here, before routing: an explicit UseRouting after ProxyEntry keeps the
            // host from putting its implicit one first, so /session/... never pays for endpoint matching.
            app.UseNodeHeader(options).UseProxyEntry();
        }
    }

    /// <summary>/healthz (503 while draining or warming up) and the 404 for any other path; returns the warm-up to begin.</summary>
    private static NodeWarmUp MapHealthAndFallback(WebApplication app, TunnelServerOptions options, ServerEndpoints endpoints)
    {
        // A draining node says so at once, so a balancer's health check stops sending to it while it drains.
        // A node warming up says so too, until its clients have had time to reconnect (ProxyEntry:WarmUp).
        PublicDrain drain = app.Services.GetRequiredService<PublicDrain>();
        NodeWarmUp warmUp = app.Services.GetRequiredService<NodeWarmUp>();
        app.MapGet("/healthz", context => drain.IsDraining
            ? ProblemResponse.WriteAsync(context, StatusCodes.Status503ServiceUnavailable, ProblemTypes.ServerDraining, "Draining",
                $"Node {options.Cluster.ResolvedNodeName} is shutting down: send new requests to another node.")
            : warmUp.IsWarmingUp
                ? ProblemResponse.WriteAsync(context, StatusCodes.Status503ServiceUnavailable, ProblemTypes.WarmingUp, "Warming up",
                    $"Node {options.Cluster.ResolvedNodeName} has just started and waits for its clients to reconnect.")
                : context.Response.WriteAsync("ok"));
        WrongPortAnswer.Map(app, endpoints);
        app.MapFallback(context => ProblemResponse.WriteAsync(context, StatusCodes.Status404NotFound, ProblemTypes.NotFound,
            "Not found", endpoints.IsAdmin(context)
                ? "The admin listener serves /metrics, /healthz, /api/… and /openapi/v1.json."
                : "Public requests go to /session/{id}/{path}."));
        return warmUp;
    }

    /// <summary>Once started: the warm-up begins and the listening addresses and node are logged.</summary>
    private static void LogWhenStarted(WebApplication app, TunnelServerOptions options, ServerEndpoints endpoints, NodeWarmUp warmUp)
    {
        app.Lifetime.ApplicationStarted.Register(() =>
        {
            warmUp.Begin();
            ILogger<ServerEndpoints> logger = app.Services.GetRequiredService<ILogger<ServerEndpoints>>();
            TunnelServerLog.Listening(logger, endpoints.PublicUrl, endpoints.TunnelUrl);
            TunnelServerLog.Node(logger, options.Cluster.ResolvedNodeName,
                options.Cluster.NodeHeader ? $" and sent on every public response as {NodeHeaderName}" : string.Empty);
            if (endpoints.AdminUrl is { } adminUrl)
            {
                TunnelServerLog.AdminListening(logger, adminUrl);
            }

            if (options.Public.IsLoop && !endpoints.PublicIsHttps)
            {
                TunnelServerLog.PublicOnLoop(logger, endpoints.PublicUrl);
            }

            // Said only when asked for: the default (Loop) on a listener off the loop is the task relay, silently.
            bool relayChosen = app.Configuration[$"{TunnelServerOptions.SectionName}:Public:UpgradeRelay"] is not null;
            if (relayChosen && options.Public.UpgradeRelay == ServerPublicOptions.UpgradeRelayLoop && (!options.Public.IsLoop || endpoints.PublicIsHttps))
            {
                TunnelServerLog.UpgradesOnTasks(logger);
            }

            if (LowLatencyMode.IsOn)
            {
                TunnelServerLog.LowLatencyMode(logger, LowLatencyMode.Variable);
            }
        });
    }

    private static TunnelServerOptions BindAndValidate(IConfiguration configuration)
    {
        TunnelServerOptions options = Bind(configuration);
        var failures = new List<string>();
        AddFailures(failures, new TunnelServerOptionsAnnotations().Validate(null, options));
        AddFailures(failures, new Tunnel2.TunnelServer.Tcp.TcpServerOptionsValidator().Validate(null, options));
        ValidateOptionsResult custom = new TunnelServerOptionsValidator().Validate(null, options);
        if (custom.Failed)
        {
            failures.AddRange(custom.Failures);
        }
        else
        {
            // Only options that passed the checks above are worth reading files for.
            ValidateFiles(options, configuration, failures);
        }

        return failures.Count == 0
            ? options
            : throw new OptionsValidationException(TunnelServerOptions.SectionName, typeof(TunnelServerOptions), failures);
    }

    /// <exception cref="OptionsValidationException">A value does not convert to its key's type.</exception>
    private static TunnelServerOptions Bind(IConfiguration configuration)
    {
        var options = new TunnelServerOptions();
        try
        {
            configuration.GetSection(TunnelServerOptions.SectionName).Bind(options);
        }
        catch (InvalidOperationException ex)
        {
            // e.g. "Failed to convert configuration value 'bogus' at 'TunnelServer:Uplink:KeepAliveTimeout' to type 'System.TimeSpan'."
            throw new OptionsValidationException(TunnelServerOptions.SectionName, typeof(TunnelServerOptions), [ex.Message]);
        }

        return options;
    }

    private static void AddFailures(List<string> failures, ValidateOptionsResult result)
    {
        if (result.Failed)
        {
            failures.AddRange(result.Failures);
        }
    }

    /// <summary>The files the options name (certificate, credentials) must read, and the certificate ask must be usable.</summary>
    private static void ValidateFiles(TunnelServerOptions options, IConfiguration configuration, List<string> failures)
    {
        try
        {
            if (!string.IsNullOrEmpty(options.Tls.Certificate))
            {
                ServerCertificate.Read(options.Tls.Certificate, options.Tls.CertificateKey!).Dispose();
            }
        }
        catch (InvalidConfigurationException ex)
        {
            failures.Add(ex.Message);
        }

        if (options.Admin.CertificateAsk && CertificateAskEndpoint.Problem(configuration) is { } askProblem)
        {
            failures.Add(askProblem);
        }

        try
        {
            if (!string.IsNullOrEmpty(options.CredentialsFile))
            {
                CredentialsFile.Read(options.CredentialsFile);
            }
        }
        catch (InvalidConfigurationException ex)
        {
            failures.Add(ex.Message);
        }
    }

    /// <summary>
    /// The public listener: HTTP/1.1, plus HTTP/2 by ALPN over TLS.
    /// </summary>
    private static ListenOptions ListenPublic(KestrelServerOptions kestrel, TunnelServerOptions options, ServerEndpoints endpoints)
    {
        if (!ListenAddress.TryParse(options.Listeners.PublicUrl, out ListenAddress? address, out string? error))
        {
            throw new InvalidOperationException(error); // unreachable: validated in BindAndValidate
        }

        endpoints.PublicIsHttps = address.IsHttps;
        ListenOptions? captured = null;
        void Configure(ListenOptions listen)
        {
            captured = listen;
            listen.Protocols = address.IsHttps ? HttpProtocols.Http1AndHttp2 : HttpProtocols.Http1;
            if (address.IsHttps)
            {
                // Asked on every handshake, so a reloaded certificate reaches the next connection; the context carries
                // the file's intermediates, which a bare certificate (ServerCertificateSelector) would leave out.
                ServerCertificate certificate = kestrel.ApplicationServices.GetRequiredService<ServerCertificate>();
                listen.UseHttps(new TlsHandshakeCallbackOptions
                {
                    OnConnection = _ => ValueTask.FromResult(new SslServerAuthenticationOptions
                    {
                        ServerCertificateContext = certificate.Context,
                        ApplicationProtocols = [SslApplicationProtocol.Http2, SslApplicationProtocol.Http11],
                    }),
                });
            }
        }

        // On the server's loop when chosen: a LoopEndPoint is what the loop's transport alone binds.
        bool onLoop = options.Public.IsLoop && !address.IsHttps;
        kestrel.Listen(onLoop ? new LoopEndPoint(address.EndPoint) : address.EndPoint, listen =>
        {
            if (onLoop && options.Public.StartOnLoop)
            {
                LoopConnectionStart.Use(listen); // first, before Kestrel's HTTP middleware
            }

            Configure(listen);
        });

        return captured!;
    }

    /// <summary>With <c>TunnelServer:Cluster:NodeHeader</c>, <c>Tunnel2-Node</c> on every public response, set before the response starts.</summary>
    private static IApplicationBuilder UseNodeHeader(this IApplicationBuilder app, TunnelServerOptions options)
    {
        if (!options.Cluster.NodeHeader)
        {
            return app;
        }

        string node = options.Cluster.ResolvedNodeName;
        return app.Use((context, next) =>
        {
            context.Response.Headers[NodeHeaderName] = node;
            return next(context);
        });
    }

    public const string NodeHeaderName = "Tunnel2-Node";
}
