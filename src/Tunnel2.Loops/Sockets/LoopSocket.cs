using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

/// <summary>
/// A non-blocking connected socket owned by one <see cref="EventLoop"/>, used on its thread only. Reads go into the
/// caller's buffer or the loop's pooled one; sends go straight to the kernel, and what it cannot take now waits in an
/// outbound queue bounded by <see cref="Window"/> (the writer is told to stop, then OnWritable). Half-close, reset and
/// errors are values. Interest in epoll follows the state: reading unless paused or at end of stream, writing only while
/// something waits; a socket that wants neither stays in the set for its errors (<see cref="UpdateInterest"/>).
/// </summary>
public sealed partial class LoopSocket : ILoopHandler
{
    /// <summary>The outbound bound unless given: one stream window of the protocol (256 KiB).</summary>
    public const int DefaultWindow = 256 * 1024;

    private readonly EventLoop _loop;
    private readonly Socket? _owner;
    private readonly ILoopSocketHandler _handler;
    private readonly OutboundQueue _queue = new();
    private LoopRegistration _registration;
    private LoopReadiness _interest;
    private bool _connecting, _readPaused, _endOfStream, _shutdownRequested, _writeShut, _wantWritable, _closeAfterShut, _hungUp;

    private LoopSocket(EventLoop loop, int fd, Socket? owner, ILoopSocketHandler handler, int window, bool connecting)
    {
        loop.AssertOnLoop();
        _loop = loop;
        Fd = fd;
        _owner = owner;
        _handler = handler;
        Window = window;
        _connecting = connecting;
        UpdateInterest();
    }

    public int Fd { get; }

    public int Window { get; }

    public bool IsClosed { get; private set; }

    /// <summary>Why the socket failed, when a call's value said it did.</summary>
    public LoopError LastError { get; private set; }

    /// <summary>Bytes taken by Send and not yet in the kernel.</summary>
    public int QueuedBytes => _queue.Count;

    /// <summary>Stops (or resumes) reading: the owner's backpressure while what it read cannot go on.</summary>
    public bool ReadPaused
    {
        get => _readPaused;
        set
        {
            _readPaused = value;
            UpdateInterest();
        }
    }

    /// <summary>Takes over a connected <paramref name="socket"/> (made non-blocking here); disposed when this closes. Best a
    /// socket used only synchronously so far: an async call would have put it in the runtime's epoll set too, which then
    /// wakes for its events for nothing.</summary>
    public static LoopSocket Adopt(EventLoop loop, Socket socket, ILoopSocketHandler handler, int window = DefaultWindow)
    {
        socket.Blocking = false;
        return new LoopSocket(loop, (int)socket.SafeHandle.DangerousGetHandle(), socket, handler, window, connecting: false);
    }

    /// <summary>Takes over a connected non-blocking raw descriptor (one <see cref="LoopListener"/> accepted); closed when this closes.</summary>
    public static LoopSocket Adopt(EventLoop loop, int fd, ILoopSocketHandler handler, int window = DefaultWindow) =>
        new(loop, fd, owner: null, handler, window, connecting: false);

    /// <summary>Starts a non-blocking connect (never blocks the loop: no name resolution here, an address only).
    /// OnConnected follows, or OnClosed with the reason.</summary>
    /// <returns>The socket, or null when not even the connect could start (<paramref name="error"/> says why).</returns>
    public static LoopSocket? Connect(EventLoop loop, IPEndPoint to, ILoopSocketHandler handler, out LoopError error, int window = DefaultWindow)
    {
        int fd = SocketCalls.Connect(to);
        if (fd < 0)
        {
            error = LoopError.FromErrno(-fd);
            return null;
        }
        error = LoopError.None;
        SocketCalls.SetNoDelay(fd);
        return new LoopSocket(loop, fd, owner: null, handler, window, connecting: true);
    }

    /// <summary>
    /// Starts a non-blocking connect of <paramref name="socket"/> (new, unconnected, of the endpoint's family, configured
    /// by the caller), which this then owns and disposes when it closes. Through the runtime's socket, whose handle is
    /// counted, another thread may send on it (under the owner's lock) without ever reaching a descriptor number that
    /// was closed and reused. OnConnected follows, or OnClosed with the reason.
    /// </summary>
    /// <returns>The socket, or null when not even the connect could start (<paramref name="error"/> says why; the socket is disposed).</returns>
    public static LoopSocket? Connect(EventLoop loop, Socket socket, IPEndPoint to, ILoopSocketHandler handler, out LoopError error, int window = DefaultWindow)
    {
        socket.Blocking = false;
        int fd = (int)socket.SafeHandle.DangerousGetHandle();
        int result = SocketCalls.Connect(fd, to);
        if (result < 0)
        {
            error = LoopError.FromErrno(-result);
            socket.Dispose();
            return null;
        }
        error = LoopError.None;
        return new LoopSocket(loop, fd, socket, handler, window, connecting: true);
    }

    public void SetNoDelay() => SocketCalls.SetNoDelay(Fd);

    /// <summary>Half-close: a FIN after what is queued has gone; sends after this are refused (Closed).</summary>
    public void ShutdownWrite()
    {
        if (IsClosed || (_shutdownRequested && !_closeAfterShut))
        {
            return;
        }
        _shutdownRequested = true;
        ShutWhenDrained();
    }

    /// <summary>The graceful end once the peer has finished sending too: what is queued goes out, then a FIN, then the
    /// descriptor closes. No OnClosed follows.</summary>
    public void CloseAfterDrain()
    {
        _closeAfterShut = true;
        ShutdownWrite();
    }

    /// <summary>Closes at once; what is queued is dropped. No OnClosed follows.</summary>
    public void Close()
    {
        if (IsClosed)
        {
            return;
        }
        IsClosed = true;
        LeaveSet();
        _queue.Clear();
        if (_owner is not null)
        {
            _owner.Dispose();
        }
        else
        {
            LibC.close(Fd);
        }
    }

    /// <summary>
    /// Lets the descriptor go without closing it, for another owner to adopt (the public listener hands an upgraded
    /// caller to its relay): it leaves the epoll set at once, so no readiness of it reaches this socket's handler from
    /// here, and the socket counts as closed. Only a raw descriptor with nothing queued can go. On the loop; no OnClosed follows.
    /// </summary>
    /// <returns>The descriptor, still open, still non-blocking.</returns>
    public int Release()
    {
        _loop.AssertOnLoop();
        if (IsClosed || _owner is not null || _queue.Count > 0)
        {
            throw new InvalidOperationException("Only an open raw descriptor with nothing queued can be released.");
        }
        IsClosed = true;
        LeaveSet();
        return Fd;
    }

    /// <summary>Aborts: the peer gets a reset (SO_LINGER 0), not a FIN. No OnClosed follows.</summary>
    public void Reset()
    {
        if (!IsClosed)
        {
            SocketCalls.SetAbortiveClose(Fd);
            Close();
        }
    }

    void ILoopHandler.OnLoopStopping()
    {
        Close();
        _handler.OnClosed(this, LoopError.LoopStopped);
    }

    private void Fail(int errno)
    {
        LastError = LoopError.FromErrno(errno);
        Close();
    }

    /// <summary>
    /// Keeps epoll's interest in step with the state. A socket that wants nothing (reads paused by its owner's
    /// backpressure or at end of stream, nothing to send) stays in the set, silent: epoll still reports an error or a
    /// hang-up for it, and a peer's reset must reach the owner then, not when something else next wakes the socket.
    /// Only once it has hung up (both ways ended, or closed) does it leave the set while it wants nothing, since a
    /// hang-up is level-triggered and would wake the loop on every turn; nothing can arrive after one that matters.
    /// </summary>
    private void UpdateInterest()
    {
        if (IsClosed)
        {
            return;
        }
        LoopReadiness want = Wanted();
        if (want == LoopReadiness.None && _hungUp)
        {
            LeaveSet();
        }
        else if (!_registration.IsRegistered)
        {
            _registration = _loop.Register(Fd, this, want);
        }
        else if (want != _interest)
        {
            _loop.Modify(_registration, want);
        }
        _interest = want;
    }

    private LoopReadiness Wanted()
    {
        LoopReadiness want = LoopReadiness.None;
        if (!_connecting && !_readPaused && !_endOfStream)
        {
            want |= LoopReadiness.Read;
        }
        if (_connecting || _queue.Count > 0 || _wantWritable)
        {
            want |= LoopReadiness.Write;
        }
        return want;
    }

    private void LeaveSet()
    {
        if (_registration.IsRegistered)
        {
            _loop.Unregister(_registration);
            _registration = default;
        }
    }
}
