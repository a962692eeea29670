using System.Buffers;
using System.Net.Sockets;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.Protocol.Relaying.OnLoop;

/// <summary>
/// The peer's bytes to the socket. The uplink's reader sends each Data frame's payload from its own buffer straight to
/// the socket (one send, no copy, no hand-off), and the peer's credit comes back at once for what the kernel
/// took. Only what the kernel refuses (or what comes before the connect) is copied into a backlog, which the loop drains
/// as the socket becomes writable, returning credit as it goes: so the backlog never holds more than the stream's window.
/// </summary>
public abstract partial class LoopStreamConnection : IStreamInboundSink
{
    private static readonly Action<object?> DrainOnLoop = static state => ((LoopStreamConnection)state!).Drain();

    /// <summary>Guards what the reader and the loop share: the backlog, the socket the reader sends on, the peer's end.</summary>
    private readonly Lock _gate = new();
    private readonly OutboundQueue _backlog = new();

    /// <summary>The socket while the reader may send on it: set once connecting, cleared at the end (under the gate).</summary>
    private Socket? _sender;
    private bool _peerEnded;

    /// <summary>Connected, and what came before the connect has gone: the reader may send directly (under the gate).</summary>
    private bool _connectedForReader;

    /// <summary>The connection has ended (under the gate): what still comes is dropped.</summary>
    private bool _closed;

    /// <summary>A send on the reader failed (under the gate): the loop ends the stream.</summary>
    private bool _sendFailed;
    private bool _drainPosted;
    private bool _writeShut;

    /// <summary>Bytes at the head of the backlog that are not the stream's (the PROXY header): no credit for them.</summary>
    private int _uncounted;

    /// <summary>Before any of the peer's bytes: <paramref name="header"/> leads the backlog, and is not the stream's (no credit for it).</summary>
    protected void Prepend(ReadOnlySpan<byte> header)
    {
        lock (_gate)
        {
            _backlog.Append(header);
            _uncounted += header.Length;
        }
    }

    public void OnInboundData(in ReadOnlySequence<byte> payload)
    {
        int sent = 0;
        bool post = false;
        lock (_gate)
        {
            foreach (ReadOnlyMemory<byte> segment in payload)
            {
                sent += SendOrKeep(segment.Span, ref post);
            }

            post = post && !_drainPosted && _sender is not null;
            _drainPosted |= post;
        }

        if (sent > 0)
        {
            Stream.ReportInboundConsumed(sent);
        }

        if (post)
        {
            Loop.Post(DrainOnLoop, this);
        }
    }

    public void OnInboundEnd()
    {
        bool post;
        lock (_gate)
        {
            _peerEnded = true;
            post = !_drainPosted && _sender is not null;
            _drainPosted |= post;
        }

        if (post)
        {
            Loop.Post(DrainOnLoop, this);
        }
    }

    /// <summary>Under the gate: sends what the kernel takes now (when nothing waits before it), keeps the rest.</summary>
    /// <returns>The bytes sent.</returns>
    private int SendOrKeep(ReadOnlySpan<byte> data, ref bool post)
    {
        int sent = 0;
        if (_sender is { } socket && _connectedForReader && _backlog.Count == 0)
        {
            sent = SendOnReader(socket, data, ref post);
            if (sent < 0)
            {
                return 0; // the socket failed: the loop ends the stream; these bytes go nowhere
            }
        }

        if (sent < data.Length && !_closed)
        {
            _backlog.Append(data[sent..]);
            post = true;
        }

        return sent;
    }

    private int SendOnReader(Socket socket, ReadOnlySpan<byte> data, ref bool post)
    {
        SocketError error;
        int sent;
        try
        {
            sent = socket.Send(data, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException)
        {
            return -1; // closed by the loop a moment ago
        }

        if (error is SocketError.Success or SocketError.WouldBlock)
        {
            return error == SocketError.Success ? sent : 0;
        }

        _sendFailed = true;
        post = true;
        return -1;
    }

    /// <summary>On the loop: sends the backlog as far as the kernel takes it, returns its credit, and passes the peer's end on once it is empty.</summary>
    private void Drain()
    {
        if (_finished || _socket is not { } socket)
        {
            return;
        }

        int sent = 0;
        bool failed, shut;
        lock (_gate)
        {
            _drainPosted = false;
            failed = _sendFailed;
            while (!failed && _connected && _backlog.Count > 0)
            {
                ReadOnlySpan<byte> head = _backlog.Head;
                int n = socket.SendSome(head);
                if (n < 0)
                {
                    failed = true;
                    break;
                }

                _backlog.Consume(n);
                sent += n;
                if (n < head.Length)
                {
                    break; // OnWritable follows
                }
            }

            _connectedForReader = _connected;
            shut = !failed && _connected && _peerEnded && _backlog.Count == 0 && !_writeShut;
            _writeShut |= shut;
        }

        if (failed)
        {
            SocketFailed(socket.LastError.Kind == LoopErrorKind.None ? new LoopError(LoopErrorKind.Reset, 0) : socket.LastError);
            return;
        }

        ReturnCredit(sent);
        if (shut)
        {
            socket.ShutdownWrite();
            EndIfDone();
            if (EndsAtPeerEnd)
            {
                End(LoopRelayEnd.Closed, reset: false); // after EndIfDone, a no-op when that ended it
            }
        }
    }

    /// <summary>Credit for what left the backlog, less the bytes that were not the stream's.</summary>
    private void ReturnCredit(int sent)
    {
        int own = sent - Math.Min(sent, _uncounted);
        _uncounted -= sent - own;
        if (own > 0)
        {
            Stream.ReportInboundConsumed(own);
        }
    }

    public void OnWritable(LoopSocket socket) => Drain();
}
