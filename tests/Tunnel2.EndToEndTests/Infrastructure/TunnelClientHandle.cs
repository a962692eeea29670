using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.EventLoops;
using Tunnel2.TunnelClient.Relay;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>A real TunnelClient host running in this process.</summary>
public sealed class TunnelClientHandle(IHost host) : IAsyncDisposable
{
    private bool _stopped;

    public IHost Host { get; } = host;

    public TunnelClientStatus Status => Host.Services.GetRequiredService<TunnelClientStatus>();

    /// <summary>The request inspector's URL, for a client started with <c>--inspect-url</c> (<see cref="TunnelStack.StartInspectedClientAsync"/>).</summary>
    public Uri InspectorUrl => Host.Services.GetRequiredService<Tunnel2.TunnelClient.Inspection.InspectorListener>().Url!;

    /// <summary>Requests waiting in the client's queue for a concurrency slot.</summary>
    public int QueuedRequests => Host.Services.GetRequiredService<BackendRelay>().QueuedRequests;

    /// <summary>Fires when the client stops itself (e.g. its token was refused).</summary>
    public CancellationToken Stopping => Host.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping;

    public Task StartAsync() => Host.StartAsync();

    public async Task StopAsync()
    {
        if (_stopped)
        {
            return;
        }

        _stopped = true;
        await Host.StopAsync(TimeSpan.FromSeconds(10));
    }

    /// <summary>The client's event loop (its plain-TCP uplinks and TCP targets), if it has one; null also once a test has disposed the host itself.</summary>
    private ClientLoop? EventLoop()
    {
        try
        {
            return Host.Services.GetService<ClientLoop>();
        }
        catch (ObjectDisposedException)
        {
            return null;
        }
    }

    public async ValueTask DisposeAsync()
    {
        // The client's event loop, if it runs one: a blocking call made on it (the guard trips) or any other exception a
        // loop callback threw fails the test that ran it.
        ClientLoop? loop = EventLoop();
        await StopAsync();
        Host.Dispose();
        Assert.True((loop?.FaultCount ?? 0) == 0, $"The client's event loop had {loop?.FaultCount} faults (see the client's log: 'A callback on the client's event loop failed').");
    }
}
