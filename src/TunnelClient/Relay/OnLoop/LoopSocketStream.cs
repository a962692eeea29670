using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// A backend connection's bytes through the client's event loop (<c>TunnelClient:Backends:Relay</c> = <c>Loop</c>),
/// for the HTTP/1.1 relay's pipes in place of a <see cref="NetworkStream"/>: the socket is connected without blocking
/// on the loop and lives in the loop's epoll set only, never in the runtime's, so no socket-engine thread wakes for it.
/// A read that finds no bytes waits for the loop, and the loop completes it inline: the relay's continuation (the
/// response head parsed, sent up the uplink, the body pumped) runs on the loop in the turn that read the answer, with
/// no hop to the thread pool. Sends go straight to the kernel from whichever thread writes; only what it refuses waits
/// for the loop (<c>.Write.cs</c>). Ends (an abort, the dispose) close the socket on the loop, which owns it.
/// </summary>
internal sealed partial class LoopSocketStream : Stream, ILoopSocketHandler
{
    private readonly EventLoop _loop;
    private readonly Socket _socket;

    /// <summary>Guards what a reader and the loop share: the pending read and whether reading is paused.</summary>
    private readonly Lock _gate = new();
    private LoopSocket? _loopSocket;
    private TaskCompletionSource? _connect;
    private IPEndPoint? _target;
    private LoopCreditWait? _creditWait;
    private bool _closed;

    /// <param name="socket">A new unconnected socket, configured by the caller; the loop's socket owns it once connecting.</param>
    public LoopSocketStream(EventLoop loop, Socket socket)
    {
        _loop = loop;
        _socket = socket;
    }

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    /// <summary>Waits on the loop for a stream's send credit, for the body this connection reads (made once per connection).</summary>
    public LoopCreditWait CreditWait => _creditWait ??= new LoopCreditWait(_loop);

    /// <summary>Connects on the loop; completes off the loop.</summary>
    /// <exception cref="SocketException">The connect failed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> ended the wait (the socket is closed).</exception>
    public async Task ConnectAsync(IPEndPoint to, CancellationToken cancellationToken)
    {
        _connect = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _target = to;
        if (!_loop.Post(static state => ((LoopSocketStream)state!).StartConnect(), this))
        {
            throw new SocketException((int)SocketError.Shutdown);
        }

        using CancellationTokenRegistration cancel = cancellationToken.UnsafeRegister(static state => ((LoopSocketStream)state!).Abort(), this);
        await _connect.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Ends the connection at once with a reset, from any thread (a reset of the caller's stream): on the loop.</summary>
    public void Abort() => PostOrRun(static stream => stream.CloseOnLoop(reset: true));

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public void OnConnected(LoopSocket socket) => _connect?.TrySetResult();

    public void OnClosed(LoopSocket socket, LoopError reason)
    {
        _closed = true;
        var failure = new IOException($"the backend connection failed ({reason.Kind})", reason.Errno > 0 ? new SocketException(reason.Errno) : null);
        if (_connect is { Task.IsCompleted: false } connect)
        {
            connect.TrySetException(reason.Errno > 0 ? new SocketException(reason.Errno) : failure);
        }

        FailPendingRead(failure);
        FailPendingWrite(failure);
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            PostOrRun(static stream => stream.CloseOnLoop(reset: false));
        }

        base.Dispose(disposing);
    }

    private void StartConnect()
    {
        if (_closed)
        {
            _connect!.TrySetException(new SocketException((int)SocketError.OperationAborted));
            return;
        }

        _loopSocket = LoopSocket.Connect(_loop, _socket, _target!, this, out LoopError error);
        if (_loopSocket is null)
        {
            _closed = true;
            _connect!.TrySetException(new SocketException(error.Errno > 0 ? error.Errno : (int)SocketError.SocketError));
        }
    }

    private void CloseOnLoop(bool reset)
    {
        if (_closed)
        {
            return;
        }

        _closed = true;
        if (_loopSocket is { } socket)
        {
            // A close that would drop part of a write is an abort: the backend must not take a cut request for a whole one.
            if (reset || _unsent is not null || socket.QueuedBytes > 0)
            {
                socket.Reset();
            }
            else
            {
                socket.Close();
            }
        }
        else
        {
            _socket.Dispose(); // never connected: the loop never had it
        }

        _connect?.TrySetException(new OperationCanceledException("the connection was closed while connecting"));
        var closed = new IOException("the backend connection was closed");
        FailPendingRead(closed);
        FailPendingWrite(closed);
    }

    /// <summary>Runs <paramref name="work"/> on the loop (now, when on it); when the loop has stopped, it closed the socket already.</summary>
    private void PostOrRun(Action<LoopSocketStream> work)
    {
        if (_loop.IsOnLoopThread)
        {
            work(this);
            return;
        }

        if (!_loop.Post(static state => { var (stream, action) = ((LoopSocketStream, Action<LoopSocketStream>))state!; action(stream); }, (this, work)))
        {
            FailPendingRead(new IOException("the client's event loop has stopped"));
        }
    }
}
