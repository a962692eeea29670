using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Tunnel2.Protocol.Relaying.OnLoop;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// One caller of a session's TCP port relayed on <see cref="TcpCallerLoop"/>: the caller's socket, dispatched already
/// (<see cref="TcpDispatch"/>), is taken over by the loop and relayed by the shared <see cref="LoopStreamConnection"/>,
/// with what the target sent during the dispatch first. Ends as <see cref="TcpCallerRelay"/> does, with the same log
/// line and metric cause (<see cref="TcpCallerEnd"/>): the caller's FIN goes up as END_STREAM, the client's END_STREAM
/// shuts the caller's receiving side; a reset from the client, a lost uplink or the idle timeout cuts the caller with a
/// reset, and a caller that breaks resets the stream with Cancelled.
/// </summary>
internal sealed class LoopCallerConnection : LoopStreamConnection, ITcpCallerRelay
{
    private readonly string _session;
    private readonly Socket _caller;
    private readonly ILogger _logger;
    private readonly TcpMetrics _metrics;
    private readonly StreamIdleWatch _idle;
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile bool _idleClosed;

    public LoopCallerConnection(TcpCallerLoop loop, string session, Socket caller, IPEndPoint? remote, IByteStream stream, TcpMetrics metrics)
        : base(loop.Loop, stream)
    {
        _session = session;
        _caller = caller;
        _logger = loop.Logger;
        _metrics = metrics;
        _idle = new StreamIdleWatch(stream);
        Caller = remote;
        StreamId = stream.Id;
    }

    public IPEndPoint? Caller { get; }

    public uint StreamId { get; }

    protected override ProtocolErrorCode SocketFailureCode => ProtocolErrorCode.Cancelled;

    public Task RunAsync()
    {
        _metrics.Opened();
        if (!Loop.Post(static state => ((LoopCallerConnection)state!).StartOnLoop(), this))
        {
            // The loop has stopped (the server is shutting down): nothing is relayed, both ends are cut.
            Stream.Reset(ProtocolErrorCode.Cancelled);
            RelayEnd.Reset(_caller);
            EndUnstarted(LoopRelayEnd.Failed(new LoopError(LoopErrorKind.LoopStopped, 0)));
        }

        return _done.Task;
    }

    public bool IsIdle(long now, long timeoutMs) => _idle.IsIdle(now, timeoutMs);

    /// <summary>From the idle sweep: the reset is made on the loop, where the end is known (the stream is not yet let go).</summary>
    public void CloseIdle()
    {
        _idleClosed = true;
        Loop.Post(static state => ((LoopCallerConnection)state!).CloseIdleOnLoop(), this);
    }

    /// <summary>On the loop: the socket is the loop's from here; the target's early bytes (in the stream's pipe) go first.</summary>
    private void StartOnLoop()
    {
        LoopSocket socket = LoopSocket.Adopt(Loop, _caller, this);
        Attach(socket, _caller, connected: true);
        Stream.TakeOverInbound(this);
        Stream.SetAbortListener(this);
    }

    private void CloseIdleOnLoop()
    {
        if (!IsFinished)
        {
            Stream.Reset(ProtocolErrorCode.IdleTimeout);
            End(LoopRelayEnd.Aborted, reset: true);
        }
    }

    /// <summary>Off the loop: the caller's one log line and its metric.</summary>
    protected override void OnEnded(in LoopRelayEnd ending)
    {
        (string Cause, string Text) reason = Describe(ending);
        TcpLog.CallerEnded(_logger, _session, Caller, StreamId, reason.Text, Stream.SentBytes, Stream.ReceivedBytes);
        _metrics.Ended(reason.Cause);
    }

    protected override void OnReleased() => _done.TrySetResult();

    private (string Cause, string Text) Describe(in LoopRelayEnd ending) => ending.Kind switch
    {
        LoopRelayEndKind.Closed => TcpCallerEnd.Closed,
        _ when _idleClosed => TcpCallerEnd.Idle,
        LoopRelayEndKind.Aborted when !Stream.Uplink.IsOpen => TcpCallerEnd.UplinkLost(Stream.Uplink.CloseReason),
        LoopRelayEndKind.Aborted when Stream.ResetCode is { } code => TcpCallerEnd.ClientReset(code),
        LoopRelayEndKind.SocketFailed when ending.Error.Kind == LoopErrorKind.LoopStopped => TcpCallerEnd.Stopping,
        LoopRelayEndKind.SocketFailed => TcpCallerEnd.CallerGone(Describe(ending.Error)),
        _ => TcpCallerEnd.CallerGone(ending.Detail ?? "reset"),
    };
}
