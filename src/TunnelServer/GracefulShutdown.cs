using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Diagnostics;
using Tunnel2.TunnelServer.Tcp;

namespace Tunnel2.TunnelServer;

/// <summary>
/// On shutdown (SIGTERM, Ctrl+C), before Kestrel stops: refuse new uplinks and public requests (503), close the public
/// TCP ports to new callers, send GoAway on every uplink, wait for the public requests and TCP connections in flight (up
/// to <see cref="TunnelServerOptions.DrainTimeout"/>), then close the uplinks after flushing what they still carry.
/// </summary>
public sealed class GracefulShutdown(
    PublicDrain drain,
    SessionRegistry registry,
    TcpSessions tcp,
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
        tcp.StopAccepting();
        List<Uplink> uplinks = registry.GetAllUplinks();
        foreach (Uplink uplink in uplinks)
        {
            uplink.BeginDrain();
        }

        TunnelServerLog.Draining(logger, uplinks.Count, (long)timeout.TotalMilliseconds, drain.InFlight, tcp.OpenConnectionsTotal);
        bool[] idle = await Task.WhenAll(drain.WaitIdleAsync(timeout), tcp.WaitIdleAsync(timeout));
        if (idle[0] && idle[1])
        {
            TunnelServerLog.Drained(logger);
        }
        else
        {
            TunnelServerLog.DrainTimedOut(logger, drain.InFlight, drain.Upgraded, tcp.OpenConnectionsTotal);
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
