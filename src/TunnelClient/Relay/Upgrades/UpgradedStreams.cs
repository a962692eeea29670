using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Tunnel2.Protocol.Relaying.OnLoop;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Http1;

namespace Tunnel2.TunnelClient.Relay.Upgrades;

/// <summary>
/// The streams whose backend switched protocols (101: a WebSocket, or any other <c>Upgrade</c>). They hold no request
/// slot: they have a cap of their own (<c>TunnelClient:Limits:MaxUpgradedStreams</c>), checked before the upgrade request is
/// sent, and an idle timeout (<c>TunnelClient:Limits:UpgradedIdleTimeout</c>): a stream that moved no byte either way for
/// that long is reset, which closes its backend connection and the caller's. One timer checks them all. The bytes move
/// on the client's event loop (<see cref="LoopUpgradedConnection"/>) when it was given one and the backend connection is
/// plain TCP; else (a TLS backend, <c>TunnelClient:Upgrades:Relay</c> = <c>Tasks</c>) with a task per direction.
/// </summary>
internal sealed class UpgradedStreams : IDisposable
{
    private readonly int _max;
    private readonly long _idleTimeoutMs;
    private readonly ILogger _logger;
    private readonly TunnelClientMetrics _metrics;
    private readonly Lock _sync = new();
    private readonly HashSet<StreamIdleWatch> _relaying = [];
    private readonly Timer _sweep;
    private readonly EventLoop? _loop;
    private int _reserved;

    /// <param name="loop">The client's event loop, to relay plain-TCP backends on; null: tasks for all.</param>
    public UpgradedStreams(int max, TimeSpan idleTimeout, TunnelClientMetrics metrics, ILogger logger, EventLoop? loop = null)
    {
        _max = max;
        _loop = loop;
        _idleTimeoutMs = (long)idleTimeout.TotalMilliseconds;
        _metrics = metrics;
        _logger = logger;

        // A quarter of the timeout between checks: a stream is reset between 1 and 1.25 timeouts after its last byte.
        TimeSpan period = TimeSpan.FromMilliseconds(Math.Clamp(_idleTimeoutMs / 4, 100, 30_000));
        _sweep = new Timer(static state => ((UpgradedStreams)state!).ResetIdle(), this, period, period);
    }

    /// <summary>Upgrade requests sent and upgraded streams relaying now.</summary>
    public int Count => Volatile.Read(ref _reserved);

    /// <summary>Takes a place for an upgrade request before it goes to the backend; false at the cap.</summary>
    public bool TryReserve()
    {
        while (true)
        {
            int reserved = Volatile.Read(ref _reserved);
            if (reserved >= _max)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _reserved, reserved + 1, reserved) == reserved)
            {
                return true;
            }
        }
    }

    /// <summary>Gives back the place of an upgrade request that ended (switched or not).</summary>
    public void Release() => Interlocked.Decrement(ref _reserved);

    /// <summary>
    /// Relays bytes both ways between the stream and the backend connection the 101 came on, until both directions
    /// end: the caller's END_STREAM shuts the backend connection's sending side (a half-close), the backend's end of
    /// stream goes up as END_STREAM, and a reset (the server's, or the idle timeout's) ends both through the stream's
    /// abort listener, which shuts the connection down.
    /// </summary>
    public async Task RelayAsync(IHttpExchange exchange, BackendConnection connection)
    {
        IByteStream stream = exchange.AsByteStream();
        var watch = new StreamIdleWatch(stream);
        lock (_sync)
        {
            _relaying.Add(watch);
        }

        _metrics.UpgradeStarted();
        try
        {
            Task<string?> relay = _loop is { } loop && connection.Stream is NetworkStream
                ? RelayOnLoopAsync(stream, connection, loop)
                : RelayOnTasksAsync(stream, connection);
            if (await relay.ConfigureAwait(false) is { } broken)
            {
                TunnelClientLog.UpgradedStreamEnded(_logger, stream.Id, broken);
            }
        }
        finally
        {
            lock (_sync)
            {
                _relaying.Remove(watch);
            }

            _metrics.UpgradeEnded();
        }
    }

    /// <returns>Why one way broke first (the backend reset its connection, the caller's side was reset); null when it ended cleanly.</returns>
    private static async Task<string?> RelayOnTasksAsync(IByteStream stream, BackendConnection connection)
    {
        // A failure either way resets the stream, which shuts the backend connection down through its abort listener.
        DuplexRelayResult result = await DuplexRelay.RunAsync(stream,
            RelayEnd.OfStream(connection.Stream, halfClose: connection.Socket, buffered: connection.Input)).ConfigureAwait(false);

        // A break after a clean half-close is not logged, as before.
        return result.FailedSide is { } side && side == result.FirstEnded ? result.Error?.Message ?? "cancelled" : null;
    }

    /// <summary>
    /// What the head's read took in past the 101 head goes up first, in order; then the loop takes the socket over. Until
    /// then the caller's bytes wait in the stream's pipe and a reset reaches the backend connection's own listener.
    /// </summary>
    private static async Task<string?> RelayOnLoopAsync(IByteStream stream, BackendConnection connection, EventLoop loop)
    {
        try
        {
            await SendEarlyBytesAsync(stream, connection.Input).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is StreamResetException or UplinkClosedException)
        {
            return ex.Message; // the backend connection's listener has cut it
        }
        catch (Exception ex) when (ex is IOException or SocketException)
        {
            stream.Reset(ProtocolErrorCode.BackendAborted);
            return ex.Message;
        }

        // The dial and the head's read used the runtime's async sockets: out of its epoll set, or each message the
        // backend sends would wake its epoll thread and a worker besides the loop.
        RuntimeEpoll.Leave(connection.Socket);
        var relay = new LoopUpgradedConnection(loop, stream, connection.Socket);
        relay.Start();
        LoopRelayEnd end = await relay.Done.ConfigureAwait(false);
        return end.Kind switch
        {
            LoopRelayEndKind.Closed => null,
            LoopRelayEndKind.SocketFailed => LoopStreamConnection.Describe(end.Error),
            _ => !stream.Uplink.IsOpen ? $"the uplink was lost ({stream.Uplink.CloseReason})" : $"the stream was reset ({stream.ResetCode})",
        };
    }

    private static async Task SendEarlyBytesAsync(IByteStream stream, PipeReader buffered)
    {
        if (!buffered.TryRead(out ReadResult read))
        {
            return;
        }

        ReadOnlySequence<byte> early = read.Buffer;
        try
        {
            // A backend that closed right after them: the loop reads that end again from the socket.
            if (!early.IsEmpty)
            {
                await stream.SendAsync(early, endStream: false, CancellationToken.None).ConfigureAwait(false);
            }
        }
        finally
        {
            buffered.AdvanceTo(early.End);
        }
    }

    public void Dispose() => _sweep.Dispose();

    private void ResetIdle()
    {
        long now = Environment.TickCount64;

        // Under the lock: a watch is in the list until its relay returns, which is before the owner disposes the
        // stream, so every stream reset here is still on the exchange that went idle. The resets come after the walk,
        // in case one ends a relay on this thread.
        lock (_sync)
        {
            List<StreamIdleWatch>? idle = null;
            foreach (StreamIdleWatch watch in _relaying)
            {
                if (watch.IsIdle(now, _idleTimeoutMs))
                {
                    (idle ??= []).Add(watch);
                }
            }

            if (idle is null)
            {
                return;
            }

            foreach (StreamIdleWatch watch in idle)
            {
                if (_relaying.Contains(watch))
                {
                    TunnelClientLog.UpgradedStreamIdle(_logger, watch.Stream.Id, _idleTimeoutMs);
                    _metrics.RequestFailed("upgraded-idle-timeout");
                    watch.Stream.Reset(ProtocolErrorCode.IdleTimeout);
                }
            }
        }
    }
}
