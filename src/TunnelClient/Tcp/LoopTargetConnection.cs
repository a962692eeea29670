using System.Net;
using System.Net.Sockets;
using Tunnel2.Hosting.Sockets;
using Tunnel2.Loops.Scheduling;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// One TCP stream and its target connection on <see cref="LoopTargetRelay"/>'s loop: the connect (with its timeout), the
/// two directions (<c>.Inbound.cs</c>, <c>.Outbound.cs</c>), and one end, logged and the stream disposed off the loop.
/// The loop owns the <see cref="LoopSocket"/>; the uplink's reader sends on the same socket under <see cref="_gate"/>
/// (the one state both threads touch). Ends as <see cref="TcpTargetRelay"/> does: the caller's END_STREAM shuts the
/// target's sending side, the target's FIN goes up as END_STREAM, a target that cannot be reached resets the stream with
/// BackendConnectFailed, one that breaks with BackendAborted, and a reset from the server cuts the target.
/// </summary>
internal sealed partial class LoopTargetConnection : ILoopSocketHandler, IStreamAbortListener
{
    private readonly LoopTargetRelay _relay;
    private readonly UplinkStream _stream;
    private readonly uint _id;
    private readonly string _caller;
    private LoopSocket? _socket;
    private LoopTimer? _connectTimer;
    private bool _connected;
    private bool _finished;
    private (string Reason, bool Unreachable) _ending;

    /// <summary>On the uplink's reader thread, in OnStreamOpened: the sink and abort listener are set before any frame of the stream.</summary>
    public LoopTargetConnection(LoopTargetRelay relay, UplinkStream stream)
    {
        _relay = relay;
        _stream = stream;
        _id = stream.Id;
        TcpStreamOpen open = stream.Tcp!.Value;
        _caller = open.Caller.ToString();
        if (relay.ProxyProtocol)
        {
            // The PROXY v2 header leads the backlog, so it goes before any of the caller's bytes; it is not the stream's.
            Span<byte> header = stackalloc byte[ProxyProtocolV2.LengthOf(open)];
            int length = ProxyProtocolV2.Write(open, header);
            _backlog.Append(header[..length]);
            _uncounted = length;
        }

        stream.AttachInboundSink(this);
        _connectTimer = relay.Loop.Schedule(relay.ConnectTimeout, static state => ((LoopTargetConnection)state!).OnConnectTimeout(), this);
        stream.SetAbortListener(this);
    }

    /// <summary>On the loop: dials the target's address (resolved already; no name resolution here).</summary>
    internal void StartConnect(IPEndPoint to)
    {
        if (_finished)
        {
            return;
        }

        Socket? socket = new(to.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.NoDelay = true;
            UnsentBytesLimit.TryApply(socket, _relay.UnsentBytesLimit);
            Socket sender = socket;
            socket = null; // the loop socket owns it from here (and disposes it when the connect cannot start)
            _socket = LoopSocket.Connect(_relay.Loop, sender, to, this, out LoopError error);
            if (_socket is null)
            {
                Unreachable(Describe(error));
                return;
            }

            lock (_gate)
            {
                _sender = sender;
            }
        }
        finally
        {
            socket?.Dispose();
        }
    }

    /// <summary>On the loop, after the name was resolved on the thread pool.</summary>
    internal void OnResolved(Task<IPAddress[]> resolved)
    {
        if (_finished)
        {
            return;
        }

        IPEndPoint? to = resolved.IsCompletedSuccessfully ? _relay.PickAddress(resolved.Result) : null;
        if (to is null)
        {
            Unreachable(resolved.Exception?.InnerException?.Message ?? "the name has no address");
            return;
        }

        StartConnect(to);
    }

    public void OnConnected(LoopSocket socket)
    {
        _connectTimer?.Cancel();
        _connectTimer = null;
        _connected = true;
        Drain();
    }

    public void OnClosed(LoopSocket socket, LoopError reason)
    {
        if (!_connected)
        {
            Unreachable(reason.Kind == LoopErrorKind.LoopStopped ? "the client is stopping" : Describe(reason));
            return;
        }

        TargetFailed(reason);
    }

    /// <summary>The server reset the stream (the caller went away, the idle timeout) or the uplink died: from any thread.</summary>
    public void OnStreamAborted() =>
        _relay.Loop.Post(static state => ((LoopTargetConnection)state!).OnAbortedOnLoop(), this);

    private void OnAbortedOnLoop()
    {
        if (_finished)
        {
            return;
        }

        if (!_connected)
        {
            Unreachable("the caller went away first");
            return;
        }

        ProtocolErrorCode? code = _stream.ResetCode;
        string reason = !_stream.Uplink.IsOpen ? $"the uplink was lost ({_stream.Uplink.CloseReason})"
            : $"the server reset the stream ({code}{(code == ProtocolErrorCode.Cancelled ? ": the caller went away" : string.Empty)})";
        Finish(reason, reset: true);
    }

    private void OnConnectTimeout()
    {
        _connectTimer = null;
        if (!_connected && !_finished)
        {
            Unreachable($"no answer within {_relay.ConnectTimeout}");
        }
    }

    /// <summary>The target could not be reached: the server may try another client of the session.</summary>
    private void Unreachable(string why)
    {
        _stream.Reset(ProtocolErrorCode.BackendConnectFailed);
        Finish(why, reset: false, unreachable: true);
    }

    /// <summary>The target broke the connection (or the loop stops): the server tells its caller so.</summary>
    private void TargetFailed(LoopError reason)
    {
        if (_finished)
        {
            return;
        }

        _stream.Reset(reason.Kind == LoopErrorKind.LoopStopped ? ProtocolErrorCode.Cancelled : ProtocolErrorCode.BackendAborted);
        Finish($"the target broke the connection ({Describe(reason)})", reset: true);
    }

    /// <summary>
    /// The one end, on the loop: the socket is closed (with a reset when the stream failed), the reader's sends stop, and
    /// the log line and the stream's disposal go to the thread pool (a log call blocks; the stream's owner lets go last).
    /// </summary>
    private void Finish(string reason, bool reset, bool unreachable = false)
    {
        if (_finished)
        {
            return;
        }

        _finished = true;
        _connectTimer?.Cancel();
        _connectTimer = null;
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

        _ending = (reason, unreachable);
        if (!_targetEnded || _endSent)
        {
            LetGo();
        }

        // Else the END_STREAM being sent on the thread pool lets go once it is done (OnEndSent): the stream stays this
        // owner's until then, so it cannot serve another exchange under that send.
    }

    private void LetGo() =>
        LoopTargetRelay.OffLoop(static state => state.Connection.Ended(state.Reason, state.Unreachable), (Connection: this, _ending.Reason, _ending.Unreachable));

    /// <summary>Off the loop: the stream's one log line, then the owner lets go of it.</summary>
    private void Ended(string reason, bool unreachable)
    {
        if (unreachable)
        {
            TcpClientLog.TargetUnreachable(_relay.Logger, _id, _relay.TargetText, reason);
        }
        else
        {
            // What the target sent, counted as read (the writer may not have taken the last frames yet).
            TcpClientLog.Ended(_relay.Logger, _id, _caller, _relay.TargetText, reason, _fromTarget, _stream.ReceivedBytes);
        }

        _stream.ClearAbortListener();
        _stream.Dispose();
    }

    private static string Describe(LoopError error) => error.Kind switch
    {
        LoopErrorKind.Refused => "Connection refused",
        LoopErrorKind.Reset => "Connection reset by peer",
        LoopErrorKind.TimedOut => "Connection timed out",
        LoopErrorKind.LoopStopped => "the client is stopping",
        _ => $"errno {error.Errno}",
    };
}
