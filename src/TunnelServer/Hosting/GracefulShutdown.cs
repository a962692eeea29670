using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Diagnostics;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>
/// On shutdown (SIGTERM, Ctrl+C), before Kestrel stops: refuse new uplinks and public requests (503), send GoAway on
/// every uplink, wait for the public requests in flight (up to <see cref="TunnelServerOptions.DrainTimeout"/>), then
/// close the uplinks after flushing what they still carry.
/// </summary>
public sealed class GracefulShutdown(
    PublicDrain drain,
    SessionRegistry registry,
    IOptions<TunnelServerOptions> options,
    ILogger<GracefulShutdown> logger) : IHostedLifecycleService
{
    /// <summary>Time left for the uplinks to flush and close once the requests are done or the deadline passed.</summary>
    private static readonly TimeSpan CloseGrace = TimeSpan.FromSeconds(2);

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public async Task StoppingAsync(CancellationToken cancellationToken)
    {
        TimeSpan timeout = options.Value.DrainTimeout;
        drain.Begin();
        List<Uplink> uplinks = registry.GetAllUplinks();
        foreach (Uplink uplink in uplinks)
        {
            uplink.BeginDrain();
        }

        TunnelServerLog.Draining(logger, uplinks.Count, drain.InFlight, (long)timeout.TotalMilliseconds);
        if (await drain.WaitIdleAsync(timeout))
        {
            TunnelServerLog.Drained(logger);
        }
        else
        {
            TunnelServerLog.DrainTimedOut(logger, drain.InFlight, drain.Upgraded);
        }

        // Every stream is done (or out of time): each uplink flushes its last frames and closes.
        var closing = new List<Task>(uplinks.Count);
        foreach (Uplink uplink in uplinks)
        {
            closing.Add(uplink.DrainAsync(CloseGrace));
        }

        await Task.WhenAll(closing);
        List<Uplink> late = registry.GetAllUplinks(); // registered in the moment before the drain began
        TunnelServerLog.ClosingUplinks(logger, late.Count);
        foreach (Uplink uplink in late)
        {
            uplink.Close("server shutting down");
        }
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
