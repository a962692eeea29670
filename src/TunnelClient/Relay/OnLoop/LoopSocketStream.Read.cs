using System.Net.Sockets;
using System.Threading.Tasks.Sources;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// Reads: first straight from the kernel on the reader's thread; when there is nothing yet, the read waits for the
/// loop, which completes it inline (the reader's continuation runs on the loop). An end of stream or a failure is
/// completed on the thread pool instead: what follows it (a retry, a log line, a connection closed) belongs there.
/// Reading stays armed in epoll between reads; it is paused only when bytes come with no read waiting (an idle
/// connection the backend closed, or sent to), so a request costs no epoll_ctl.
/// </summary>
internal sealed partial class LoopSocketStream : IValueTaskSource<int>
{
    private static readonly Action<object?> ArmOnLoop = static state => ((LoopSocketStream)state!).Arm();

    private ManualResetValueTaskSourceCore<int> _read; // completions run inline: on the loop, in the turn that read
    private Memory<byte> _readInto;
    private CancellationTokenRegistration _readCancel;
    private bool _readPending;
    private bool _readPaused;

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (!buffer.IsEmpty)
        {
            SocketError error;
            int n;
            try
            {
                n = _socket.Receive(buffer.Span, SocketFlags.None, out error);
            }
            catch (ObjectDisposedException)
            {
                return ValueTask.FromException<int>(new IOException("the backend connection was closed"));
            }

            if (error == SocketError.Success)
            {
                return new ValueTask<int>(n);
            }

            if (error != SocketError.WouldBlock)
            {
                return ValueTask.FromException<int>(new IOException("the backend connection failed", new SocketException((int)error)));
            }
        }

        return WaitForLoop(buffer, cancellationToken);
    }

    /// <summary>Whether this code runs on the loop that owns the socket (where <see cref="ReceiveNow"/> may be called).</summary>
    public bool IsOnItsLoop => _loop.IsOnLoopThread;

    /// <summary>
    /// On the loop, with no read pending: one scatter read into <paramref name="into"/>'s buffers in order, without
    /// waiting (a body's frames in one readv). To wait for bytes, a zero-byte <see cref="ReadAsync(Memory{byte}, CancellationToken)"/>.
    /// </summary>
    /// <returns>Bytes read; 0 at the backend's end; -1 when it has nothing now.</returns>
    /// <exception cref="IOException">The connection failed or was closed.</exception>
    public int ReceiveNow(ReadOnlySpan<Memory<byte>> into)
    {
        if (_closed || _loopSocket is not { IsClosed: false } socket)
        {
            throw new IOException("the backend connection was closed");
        }

        ReceiveResult result = socket.Receive(into);
        switch (result.Status)
        {
            case ReceiveStatus.Data:
                return result.Bytes;
            case ReceiveStatus.EndOfStream:
                return 0;
            case ReceiveStatus.WouldBlock:
                return -1;
            default:
                _closed = true; // a failure the call reports closes the socket, with no OnClosed after it
                throw new IOException($"the backend connection failed ({result.Error.Kind})",
                    result.Error.Errno > 0 ? new SocketException(result.Error.Errno) : null);
        }
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    int IValueTaskSource<int>.GetResult(short token) => _read.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _read.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _read.OnCompleted(continuation, state, token, flags);

    public void OnReadable(LoopSocket socket)
    {
        Memory<byte> into;
        lock (_gate)
        {
            if (!_readPending)
            {
                _readPaused = true; // bytes (or an end) with no read waiting: the next read re-arms
                socket.ReadPaused = true;
                return;
            }

            into = _readInto;
        }

        ReceiveResult result = into.IsEmpty ? new ReceiveResult(ReceiveStatus.Data, 0, LoopError.None) : socket.Receive(into.Span);
        switch (result.Status)
        {
            case ReceiveStatus.WouldBlock:
                return;
            case ReceiveStatus.Data:
                if (TakePendingRead())
                {
                    _read.SetResult(result.Bytes); // inline: the reader goes on here, on the loop
                }

                return;
            case ReceiveStatus.EndOfStream:
                CompleteOffLoop(null);
                return;
            default:
                _closed = true;
                CompleteOffLoop(new IOException($"the backend connection failed ({result.Error.Kind})",
                    result.Error.Errno > 0 ? new SocketException(result.Error.Errno) : null));
                return;
        }
    }

    private ValueTask<int> WaitForLoop(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        bool arm;
        _read.Reset();
        short version = _read.Version;
        _readCancel = cancellationToken.CanBeCanceled
            ? cancellationToken.UnsafeRegister(static state => ((LoopSocketStream)state!).CancelRead(), this)
            : default;
        lock (_gate)
        {
            _readInto = buffer;
            _readPending = true;
            arm = _readPaused;
        }

        if (cancellationToken.IsCancellationRequested)
        {
            CancelRead(); // cancelled before the read was pending: its callback found none
        }

        if (arm)
        {
            if (_loop.IsOnLoopThread)
            {
                Arm();
            }
            else if (!_loop.Post(ArmOnLoop, this))
            {
                FailPendingRead(new IOException("the client's event loop has stopped"));
            }
        }

        return new ValueTask<int>(this, version);
    }

    private void Arm()
    {
        if (_closed || _loopSocket is not { IsClosed: false } socket)
        {
            FailPendingRead(new IOException("the backend connection was closed"));
            return;
        }

        lock (_gate)
        {
            _readPaused = false;
        }

        socket.ReadPaused = false;
    }

    /// <returns>Whether this thread took the pending read (and must complete it).</returns>
    private bool TakePendingRead()
    {
        lock (_gate)
        {
            if (!_readPending)
            {
                return false;
            }

            _readPending = false;
            _readInto = default;
        }

        _readCancel.Unregister();
        _readCancel = default;
        return true;
    }

    private void CancelRead()
    {
        if (TakePendingRead())
        {
            _read.SetException(new OperationCanceledException());
        }
    }

    private void FailPendingRead(Exception failure)
    {
        if (TakePendingRead())
        {
            ThreadPool.UnsafeQueueUserWorkItem(static state => state.Stream.SetReadException(state.Failure), (Stream: this, Failure: failure), preferLocal: false);
        }
    }

    /// <summary>An end of stream (<paramref name="failure"/> null) or a failure, on the pool.</summary>
    private void CompleteOffLoop(Exception? failure)
    {
        if (!TakePendingRead())
        {
            return;
        }

        if (failure is null)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static stream => stream.SetReadEnd(), this, preferLocal: false);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(static state => state.Stream.SetReadException(state.Failure), (Stream: this, Failure: failure), preferLocal: false);
        }
    }

    private void SetReadException(Exception failure) => _read.SetException(failure);

    private void SetReadEnd() => _read.SetResult(0);
}
