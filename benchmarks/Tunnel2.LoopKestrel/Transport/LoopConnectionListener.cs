using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.LoopKestrel.Transport;

/// <summary>
/// Kestrel's listener over a <see cref="LoopListener"/>: the loop accepts and adopts each connection, then hands it to
/// Kestrel's accept loop through a channel (one thread-pool hop per connection, none per request).
/// </summary>
internal sealed class LoopConnectionListener : IConnectionListener, ILoopListenerHandler
{
    private readonly LoopScheduler _scheduler;
    private readonly MemoryPool<byte> _pool;
    private readonly Channel<LoopConnection> _accepted = Channel.CreateUnbounded<LoopConnection>(
        new UnboundedChannelOptions { SingleWriter = true, SingleReader = true });
    private LoopListener? _listener;

    private LoopConnectionListener(LoopScheduler scheduler, MemoryPool<byte> pool, EndPoint endPoint)
    {
        _scheduler = scheduler;
        _pool = pool;
        EndPoint = endPoint;
    }

    public EndPoint EndPoint { get; }

    /// <summary>Binds and listens here, then registers the socket on the loop.</summary>
    public static async Task<LoopConnectionListener> StartAsync(LoopScheduler scheduler, MemoryPool<byte> pool, IPEndPoint at)
    {
        var socket = new Socket(at.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        socket.Bind(at);
        socket.Listen(512);
        var listener = new LoopConnectionListener(scheduler, pool, socket.LocalEndPoint!);
        var registered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.Loop.Post(() =>
        {
            listener._listener = new LoopListener(scheduler.Loop, socket, listener);
            registered.SetResult();
        });
        await registered.Task.ConfigureAwait(false);
        return listener;
    }

    public void OnAccepted(LoopListener listener, int fd)
    {
        var connection = new LoopConnection(_scheduler, _pool, EndPoint);
        connection.Start(fd);
        _accepted.Writer.TryWrite(connection);
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

    public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
    {
        _scheduler.Loop.Post(() => _listener?.Dispose());
        _accepted.Writer.TryComplete();
        return ValueTask.CompletedTask;
    }

    public ValueTask DisposeAsync() => UnbindAsync();
}
