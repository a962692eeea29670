using System.Diagnostics.Metrics;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Options;
using OpenTelemetry.Metrics;
using Tunnel2.Hosting;
using Tunnel2.Hosting.Admin;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay;

namespace Tunnel2.TunnelClient.Admin;

/// <summary>
/// The client's admin listener (<c>--admin-url</c>): the same <c>/metrics</c> and <c>/healthz</c> as the server's,
/// served by a small Kestrel host of its own (the client has no web server otherwise) from the client's meter
/// provider. It adds the gauges only a running client can read: requests queued for a slot, and per backend its
/// exchanges in flight and whether its probe passes.
/// </summary>
public sealed class ClientAdminListener(
    IOptions<TunnelClientOptions> options, MeterProvider meterProvider, IMeterFactory meterFactory, BackendRelay relay, BackendSet backends,
    ILogger<ClientAdminListener> logger) : IHostedService, IAsyncDisposable
{
    private WebApplication? _app;

    /// <summary>The bound URL once started (the port chosen when the URL said 0).</summary>
    public Uri? Url { get; private set; }

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        TunnelClientOptions settings = options.Value;
        if (!ListenAddress.TryParse(settings.Admin.Url, out ListenAddress? address, out _))
        {
            return; // no admin listener (a bad URL never gets here: validation stops the client first)
        }

        RegisterGauges();
        (_app, Url) = await AdminHost.StartAsync(address, app => app.UseAdminEndpoints(settings.Admin.Token, meterProvider), cancellationToken);
        TunnelClientLog.AdminListening(logger, Url);
    }

    public Task StopAsync(CancellationToken cancellationToken) => _app?.StopAsync(cancellationToken) ?? Task.CompletedTask;

    public ValueTask DisposeAsync() => _app?.DisposeAsync() ?? ValueTask.CompletedTask;

    private void RegisterGauges()
    {
#pragma warning disable CA2000 // the factory owns the meters it creates and disposes them with itself
        Meter meter = meterFactory.Create(TunnelClientMetrics.MeterName);
#pragma warning restore CA2000
        meter.CreateObservableUpDownCounter("tunnel2.client.queued_requests", () => (long)relay.QueuedRequests, "{request}",
            "Requests waiting for a backend slot (TunnelClient:Limits:MaxConcurrency)");
        meter.CreateObservableUpDownCounter("tunnel2.client.backend.active_requests", () => PerBackend(backend => backend.Outstanding), "{request}",
            "Exchanges in flight on each backend, response bodies included");
        meter.CreateObservableGauge("tunnel2.client.backend.ready", () => PerBackend(backend => backend.IsProbedReady ? 1 : 0), "1",
            "1 while a backend passes its health probe (always without --health-path), else 0");
    }

    private Measurement<long>[] PerBackend(Func<Backend, long> read)
    {
        var measurements = new Measurement<long>[backends.All.Count];
        for (int i = 0; i < measurements.Length; i++)
        {
            Backend backend = backends.All[i];
            measurements[i] = new Measurement<long>(read(backend), new KeyValuePair<string, object?>("tunnel2.backend", backend.ToString()));
        }

        return measurements;
    }
}
