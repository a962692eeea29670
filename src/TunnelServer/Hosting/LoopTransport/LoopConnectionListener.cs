using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// Kestrel's listener over a <see cref="LoopListener"/>: the loop accepts (accept4, with the caller's address) and
/// adopts each connection, then hands it to Kestrel's accept loop through a channel (one thread-pool hop per
/// connection, none per request).
/// </summary>
internal sealed class LoopConnectionListener : IConnectionListener, ILoopListenerHandler
{
    private const int Backlog = 512; // Kestrel's socket transport's default

    private readonly LoopScheduler _scheduler;
    private readonly LoopReadBudget _budget;
    private readonly MemoryPool<byte> _pool;
    private readonly LoopConnectionLimits _limits;
    private readonly bool _callerHandover;
    private readonly Channel<LoopConnection> _accepted = Channel.CreateUnbounded<LoopConnection>(
        new UnboundedChannelOptions { SingleWriter = true, SingleReader = true });
    private LoopListener? _listener;

    private LoopConnectionListener(LoopScheduler scheduler, LoopReadBudget budget, MemoryPool<byte> pool, LoopConnectionLimits limits, EndPoint endPoint,
        bool callerHandover)
    {
        _scheduler = scheduler;
        _budget = budget;
        _pool = pool;
        _limits = limits;
        _callerHandover = callerHandover;
        EndPoint = endPoint;
    }

    /// <summary>The address bound (the real port when asked for port 0).</summary>
    public EndPoint EndPoint { get; }

    /// <summary>Listens on <paramref name="bound"/> (off the loop), then registers it on the loop.</summary>
    /// <param name="readBudgetPerTurn">Bytes the listener's connections may read per turn past their first read; 0: no budget.</param>
    /// <param name="callerHandover">Whether the connections offer their upgraded callers to ProxyEntry's relay on the loop.</param>
    public static async Task<LoopConnectionListener> StartAsync(LoopScheduler scheduler, MemoryPool<byte> pool, LoopConnectionLimits limits,
        int readBudgetPerTurn, Socket bound, bool callerHandover = false)
    {
        bound.Listen(Backlog);
        var listener = new LoopConnectionListener(scheduler, new LoopReadBudget(scheduler.Loop, readBudgetPerTurn), pool, limits, bound.LocalEndPoint!, callerHandover);
        var registered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool posted = scheduler.Loop.Post(() =>
        {
            listener._listener = new LoopListener(scheduler.Loop, bound, listener, peerAddresses: true);
            registered.SetResult();
        });
        if (!posted)
        {
            bound.Dispose();
            throw new InvalidOperationException("The server's event loop has stopped; the public listener cannot start on it.");
        }

        await registered.Task.ConfigureAwait(false);
        return listener;
    }

    public void OnAccepted(LoopListener listener, int fd) => OnAccepted(listener, fd, null);

    public void OnAccepted(LoopListener listener, int fd, IPEndPoint? peer)
    {
#pragma warning disable CA2000 // Kestrel disposes it once accepted; an abort closes one that could not be handed over
        var connection = new LoopConnection(_scheduler, _budget, _pool, _limits, EndPoint, peer, _callerHandover);
#pragma warning restore CA2000
        connection.Start(fd);
        if (!_accepted.Writer.TryWrite(connection))
        {
            connection.Abort(new ConnectionAbortedException("The public listener is unbinding."));
        }
    }

    public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return await _accepted.Reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ChannelClosedException)
        {
            return null;
        }
    }

    /// <summary>Stops accepting (Kestrel's graceful stop begins here); the connections accepted go on until Kestrel ends them.</summary>
    public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
    {
        _scheduler.Loop.Post(static state =>
        {
            var self = (LoopConnectionListener)state!;
            self._listener?.Dispose();
            self._accepted.Writer.TryComplete();
        }, this);
        _accepted.Writer.TryComplete();
        return ValueTask.CompletedTask;
    }

    public ValueTask DisposeAsync() => UnbindAsync();
}
