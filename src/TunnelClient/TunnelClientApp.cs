using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.Hosting.Admin;
using Tunnel2.TunnelClient.Admin;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.Hosting.Configuration;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Health;
using Tunnel2.TunnelClient.Inspection;
using Tunnel2.TunnelClient.Relay;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.EventLoops;
using Tunnel2.TunnelClient.Tcp;
using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.TunnelClient;

/// <summary>Builds the client host: options, logging, the backend relay and the service that keeps the uplink up.</summary>
public static class TunnelClientApp
{
    /// <exception cref="OptionsValidationException">The configuration is invalid; the message says what to fix.</exception>
    public static IHost Create(string[] args) => Create(args, configureServices: null);

    /// <param name="configureServices">Registers services before the defaults (which are added only where none is), for tests.</param>
    internal static IHost Create(string[] args, Action<IServiceCollection>? configureServices)
    {
        args = CommandLine.JoinRepeatedLists(args);
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings
        {
            Args = args,
            ContentRootPath = AppContext.BaseDirectory,
        });
        builder.Configuration.AddCommandLine(args, CommandLine.SwitchMappings);
        IReadOnlyList<KeyValuePair<string, string>> renamed = LegacyKeys.Renamed.Apply(builder.Configuration);

        configureServices?.Invoke(builder.Services);
        builder.Services.AddHostSerilog(builder.Configuration);
        if (builder.Configuration[$"{TunnelClientOptions.SectionName}:{nameof(TunnelClientOptions.Backends)}:{nameof(BackendsOptions.Relay)}"] != BackendsOptions.RelayTasks)
        {
            OffLoopLogging.Use(builder.Services); // the relay goes on in the loop's turn that read an answer, and may log there
        }

        builder.Services.AddOptions<TunnelClientOptions>()
            .Bind(builder.Configuration.GetSection(TunnelClientOptions.SectionName))
            .ValidateOnStart();
        builder.Services.AddSingleton<IValidateOptions<TunnelClientOptions>, TunnelClientOptionsAnnotations>();
        builder.Services.AddSingleton<IValidateOptions<TunnelClientOptions>, TunnelClientOptionsValidator>();
        builder.Services.AddSingleton<IValidateOptions<TunnelClientOptions>, TcpClientOptionsValidator>();

        // --tcp without --backend: TCP only (the backend's default address is not served).
        bool backendGiven = builder.Configuration[$"{TunnelClientOptions.SectionName}:{nameof(TunnelClientOptions.Backends)}:{nameof(BackendsOptions.Urls)}"] is not null;
        builder.Services.PostConfigure<TunnelClientOptions>(options => options.Tcp.ServesHttp = backendGiven || options.Tcp.Target is null);
        builder.Services.AddMetrics();
        builder.Services.AddSingleton<TunnelClientMetrics>();
        builder.Services.AddSingleton<TunnelClientStatus>();
        builder.Services.AddSingleton<IExitCodeSource>(services => services.GetRequiredService<TunnelClientStatus>());
        builder.Services.AddSingleton<BackendSet>();
        builder.Services.AddSingleton<BackendRelay>();
        builder.Services.AddSingleton<TcpTargetRelay>();
        builder.Services.AddSingleton<ClientLoop>();
        builder.Services.AddSingleton<LoopTargetRelay>();
        builder.Services.AddSingleton<ITcpTargetRelay>(LoopTargetRelay.Choose);
        builder.Services.AddSingleton<IUplinkStreamHandler, StreamDispatcher>();
        builder.Services.AddSingleton<ClientInstance>();
        builder.Services.AddSingleton<BackendHealth>();
        builder.Services.AddHostedService<BackendHealthProbe>();
        builder.Services.AddHostedService<BackendStartCheck>();
        builder.Services.TryAddSingleton<IServerResolver, DnsServerResolver>();
        builder.Services.AddSingleton<UplinkDialer>();
        builder.Services.AddHostedService<TunnelClientService>();
        builder.Services.AddTracingExport(builder.Configuration, "TunnelClient", TunnelClientTracing.SourceName);
        if (!string.IsNullOrEmpty(builder.Configuration[$"{TunnelClientOptions.SectionName}:Admin:Url"]))
        {
            builder.Services.AddAdminMetrics(TunnelClientMetrics.MeterName);
            builder.Services.AddSingleton<ClientAdminListener>();
            builder.Services.AddHostedService(services => services.GetRequiredService<ClientAdminListener>());
        }

        if (!string.IsNullOrEmpty(builder.Configuration[$"{TunnelClientOptions.SectionName}:Inspector:Url"]))
        {
            builder.Services.TryAddSingleton(TimeProvider.System);
            builder.Services.AddSingleton<RequestInspector>();
            builder.Services.AddSingleton<ExchangeReplayer>();
            builder.Services.AddSingleton<InspectorListener>();
            builder.Services.AddHostedService(services => services.GetRequiredService<InspectorListener>());
        }

        builder.Services.AddSingleton(new ListenerOptions(new (string Option, string Key)[] { ("--admin-url", "Admin:Url"), ("--inspect-url", "Inspector:Url") }
            .Select(listener => KeyValuePair.Create(listener.Option, builder.Configuration[$"{TunnelClientOptions.SectionName}:{listener.Key}"] ?? string.Empty))
            .Where(listener => listener.Value.Length > 0).ToList()));
        builder.Services.AddOptions<HostOptions>().Configure<IOptions<TunnelClientOptions>>((host, client) =>
            host.ShutdownTimeout = HostStop.ShutdownTimeout(client.Value.DrainTimeout));
        IHost built = builder.Build();
        RenamedKeys.LogWarnings(built.Services, renamed);
        return built;
    }
}
