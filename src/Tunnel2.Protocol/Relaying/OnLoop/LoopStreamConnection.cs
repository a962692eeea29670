using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.Protocol.Relaying.OnLoop;

/// <summary>
/// One byte stream relayed between an <see cref="IByteStream"/> and a socket on an <see cref="EventLoop"/> (issue 52,
/// stage 2): the client's TCP targets and the server's TCP callers alike. The two directions are in <c>.Inbound.cs</c>
/// (the peer's bytes from the uplink reader's buffer to the socket) and <c>.Outbound.cs</c> (the socket's bytes in pooled
/// buffers to the writer); here is the one end, on the loop, whose log line and the stream's disposal go to the thread
/// pool (<see cref="OnEnded"/>). Ends as the task relay does: the peer's END_STREAM shuts the socket's sending side, the
/// socket's FIN goes to the peer as END_STREAM (half-close); a socket that breaks resets the stream with
/// <see cref="SocketFailureCode"/>, and a reset from the peer (or a lost uplink) cuts the socket with a reset.
/// The owner supplies the socket (<see cref="Attach"/>): dialled (the client) or accepted (the server).
/// </summary>
public abstract partial class LoopStreamConnection : ILoopSocketHandler, IStreamAbortListener
{
    private LoopSocket? _socket;
    private bool _connected;
    private bool _finished;
    private LoopRelayEnd _ending;

    protected LoopStreamConnection(EventLoop loop, IByteStream stream)
    {
        Loop = loop;
        Stream = stream;
    }

    public IByteStream Stream { get; }

    /// <summary>Bytes read from the socket (sent to the peer, or on their way).</summary>
    public long FromSocket => Volatile.Read(ref _fromSocket);

    protected EventLoop Loop { get; }

    /// <summary>Whether the connection has ended (on the loop).</summary>
    protected bool IsFinished => _finished;

    protected bool IsConnected => _connected;

    /// <summary>Whether the socket's FIN has come (on the loop): it went, or goes, to the peer as END_STREAM.</summary>
    protected bool SocketEnded => _socketEnded;

    /// <summary>
    /// Whether the peer's END_STREAM, once passed on (a FIN after what came before it), ends the connection whatever the
    /// socket's side is doing: the public listener's upgraded caller, which the task relay closes likewise as the
    /// backend ends (Kestrel cannot half-close an upgraded connection). False: a half-close, the socket may still send.
    /// </summary>
    protected virtual bool EndsAtPeerEnd => false;

    /// <summary>The stream's code when the socket breaks: the client's <c>BackendAborted</c>, the server's <c>Cancelled</c>.</summary>
    protected abstract ProtocolErrorCode SocketFailureCode { get; }

    /// <summary>
    /// On the loop: the socket this connection relays; <paramref name="sender"/> is the same socket, which the uplink's
    /// reader sends on directly once <paramref name="connected"/> (else after <see cref="OnConnected"/>).
    /// </summary>
    protected void Attach(LoopSocket socket, Socket sender, bool connected)
    {
        _socket = socket;
        lock (_gate)
        {
            _sender = sender;
        }

        if (connected)
        {
            OnConnected(socket);
        }
    }

    public virtual void OnConnected(LoopSocket socket)
    {
        _connected = true;
        Drain();
    }

    public void OnClosed(LoopSocket socket, LoopError reason)
    {
        if (!_connected)
        {
            OnFailedBeforeConnected(reason);
            return;
        }

        SocketFailed(reason);
    }

    /// <summary>The peer reset the stream (or this side did: an idle timeout), or the uplink died: from any thread.</summary>
    public void OnStreamAborted() =>
        Loop.Post(static state => ((LoopStreamConnection)state!).OnAbortedOnLoop(), this);

    /// <summary>The socket closed before it connected (a dial that failed); by default a socket failure.</summary>
    protected virtual void OnFailedBeforeConnected(LoopError reason) => SocketFailed(reason);

    /// <summary>The stream was aborted before the socket connected; by default the end as after.</summary>
    protected virtual void OnAbortedBeforeConnected() => End(LoopRelayEnd.Aborted, reset: true);

    private void OnAbortedOnLoop()
    {
        if (_finished)
        {
            return;
        }

        if (!_connected)
        {
            OnAbortedBeforeConnected();
            return;
        }

        End(LoopRelayEnd.Aborted, reset: true);
    }

    /// <summary>The socket broke (or the loop stops): the peer is told with a reset.</summary>
    protected void SocketFailed(LoopError reason)
    {
        if (_finished)
        {
            return;
        }

        Stream.Reset(reason.Kind == LoopErrorKind.LoopStopped ? ProtocolErrorCode.Cancelled : SocketFailureCode);
        End(LoopRelayEnd.Failed(reason), reset: true);
    }

    /// <summary>
    /// The one end, on the loop: the socket is closed (with a reset when the stream failed), the reader's sends stop, and
    /// <see cref="OnEnded"/> and the stream's disposal go to the thread pool (a log call blocks; the owner lets go last).
    /// </summary>
    protected void End(in LoopRelayEnd ending, bool reset)
    {
        if (_finished)
        {
            return;
        }

        _finished = true;
        lock (_gate)
        {
            _sender = null; // no send from the reader from here on; the socket is closed next
            _closed = true;
            _backlog.Clear();
        }

        if (reset)
        {
            _socket?.Reset();
        }
        else
        {
            _socket?.Close();
        }

        _ending = ending;
        OnFinishing();
        if (!_socketEnded || _endSent)
        {
            LetGo();
        }

        // Else the END_STREAM being sent on the thread pool lets go once it is done (OnEndSent): the stream stays this
        // owner's until then, so it cannot serve another exchange under that send.
    }

    /// <summary>
    /// Off the loop, for a connection the loop never took (it had stopped: the process is shutting down): the end as
    /// <see cref="End"/> makes it, with no socket to close; the owner has closed its own.
    /// </summary>
    protected void EndUnstarted(in LoopRelayEnd ending)
    {
        _finished = true;
        _ending = ending;
        Release();
    }

    /// <summary>On the loop, as the connection ends: what the owner holds there (a timer) is let go.</summary>
    protected virtual void OnFinishing()
    {
    }

    /// <summary>Off the loop, once: the end's log line and counts. The stream is disposed right after.</summary>
    protected abstract void OnEnded(in LoopRelayEnd ending);

    /// <summary>Off the loop, after the stream was disposed (or let go, when <see cref="OwnsStream"/> is false).</summary>
    protected virtual void OnReleased()
    {
    }

    /// <summary>
    /// Whether the end disposes the stream: true for a TCP stream, which this connection owns; false for an upgraded
    /// exchange, whose owner disposes it once <see cref="OnReleased"/> has let it go.
    /// </summary>
    protected virtual bool OwnsStream => true;

    private void LetGo() => OffLoop(static connection => connection.Release(), this);

    private void Release()
    {
        OnEnded(_ending);
        Stream.ClearAbortListener();
        if (OwnsStream)
        {
            Stream.Dispose();
        }

        OnReleased();
    }

    /// <summary>Runs <paramref name="work"/> on the thread pool: logging, and what may write to the uplink inline.</summary>
    public static void OffLoop<TState>(Action<TState> work, TState state) =>
        ThreadPool.UnsafeQueueUserWorkItem(work, state, preferLocal: false);

    /// <summary>A socket error as a log line says it.</summary>
    public static string Describe(LoopError error) => error.Kind switch
    {
        LoopErrorKind.Refused => "Connection refused",
        LoopErrorKind.Reset => "Connection reset by peer",
        LoopErrorKind.TimedOut => "Connection timed out",
        LoopErrorKind.LoopStopped => "the process is stopping",
        _ => $"errno {error.Errno}",
    };
}
