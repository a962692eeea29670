using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// An uplink's socket on an event loop (issue 52, stage 3a): the loop reads into the uplink's buffer and dispatches
/// the frames on its own thread (<c>LoopUplinkTransport.Reader.cs</c>), so that a Data frame for a target on the same
/// loop is sent in the turn that read it; at the end of a turn it writes what the scheduler holds, in its order, in
/// few gather sends (<c>LoopUplinkTransport.Writer.cs</c>). Every field is the loop's; other threads only post to it.
/// The uplink's close completes the scheduler, which wakes the writer: it sends what is queued, then a FIN, and closes.
/// </summary>
internal sealed partial class LoopUplinkTransport : ILoopSocketHandler
{
    /// <summary>How long the last frames (a GoAway) may wait for a peer that does not read before the socket is closed anyway.</summary>
    private static readonly TimeSpan FinalFlushTimeout = TimeSpan.FromMilliseconds(500);

    private readonly EventLoop _loop;
    private readonly Uplink _uplink;
    private readonly FrameScheduler _scheduler;
    private readonly TaskCompletionSource<LoopReadEnd> _readEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _released = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Start? _start;
    private int _started;
    private LoopSocket? _socket;

    public LoopUplinkTransport(Start start, Uplink uplink)
    {
        _loop = start.Loop;
        _start = start;
        _uplink = uplink;
        _scheduler = uplink.Scheduler;
        _scheduler.WakeHook = Wake;
    }

    /// <summary>Whether the calling code runs on this uplink's loop thread.</summary>
    public bool IsOnLoopThread => _loop.IsOnLoopThread;

    /// <summary>What the dialer hands over: the loop, the connected socket, the bytes read past the handshake's head.</summary>
    internal sealed record Start(EventLoop Loop, Socket Socket, byte[] Early);

    /// <summary>Completes (on the thread pool) when the reader stops: the peer's end, an error, or the uplink's close.</summary>
    public Task<LoopReadEnd> ReadEnded => _readEnded.Task;

    /// <summary>The writer's task: completes once the socket is closed and its buffers are back.</summary>
    public Task RunAsync()
    {
        if (Interlocked.Exchange(ref _started, 1) != 0)
        {
            _readEnded.TrySetResult(new LoopReadEnd("disposed", null));
            _released.TrySetResult();
        }
        else if (!_loop.Post(static state => ((LoopUplinkTransport)state!).Begin(), this))
        {
            _start!.Socket.Dispose();
            _readEnded.TrySetResult(new LoopReadEnd("the event loop has stopped", null));
            _released.TrySetResult();
        }

        return _released.Task;
    }

    /// <summary>The uplink is disposed: a socket the loop never took is closed here.</summary>
    public void DisposeUnstarted()
    {
        if (Interlocked.Exchange(ref _started, 1) == 0)
        {
            _start!.Socket.Dispose();
        }
    }

    /// <summary>On the loop: adopts the socket, parses what the handshake read past its head, then writes what is queued.</summary>
    private void Begin()
    {
        Start start = _start!;
        _start = null;
        try
        {
            _socket = LoopSocket.Adopt(_loop, start.Socket, this);
        }
        catch (Exception ex) when (ex is InvalidOperationException or SocketException or ObjectDisposedException)
        {
            start.Socket.Dispose();
            EndRead(new LoopReadEnd($"transport error: the event loop could not take the socket ({ex.Message})", null));
            Release();
            return;
        }

        if (start.Early.Length > 0)
        {
            Receive(start.Early);
        }

        AskTurnEnd();
    }

    void ILoopSocketHandler.OnClosed(LoopSocket socket, LoopError reason)
    {
        EndRead(new LoopReadEnd($"transport error: {Describe(reason)}", null));
        _writeDone = true;
        Release();
    }

    /// <summary>On the loop, once: the socket is closed; the buffers go back and the writer's task completes.</summary>
    private void Release()
    {
        if (_released.Task.IsCompleted)
        {
            return;
        }

        ReturnReadBuffer();
        _batch.Release();
        _released.TrySetResult();
    }

    private static string Describe(LoopError error) => error.Kind switch
    {
        LoopErrorKind.Reset => "connection reset by the peer",
        LoopErrorKind.LoopStopped => "the event loop stopped",
        _ => $"{error.Kind} (errno {error.Errno})",
    };
}
