using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Tunnel2.Protocol.Relaying.OnLoop;

namespace Tunnel2.ProxyEntry.Upgrades;

/// <summary>
/// An upgraded caller relayed on the server's event loop (<c>TunnelServer:Public:UpgradeRelay</c> = <c>Loop</c>): the
/// descriptor the public listener handed over (<see cref="ICallerHandoverFeature"/>) is adopted by the loop it was on
/// and relayed by the shared <see cref="LoopStreamConnection"/>, as a TCP caller is (<c>LoopCallerConnection</c>). Ends
/// as the task relay (<see cref="UpgradeRelay"/>) does: the caller's FIN goes up as END_STREAM and the backend may still
/// answer; the backend's END_STREAM ends the exchange and closes the caller's connection (after a FIN), whatever the
/// caller was doing; a reset from the client, a lost uplink or Kestrel's abort (its stop) cuts the caller with a reset;
/// a caller that breaks resets the stream with Cancelled. The stream stays the exchange's: its owner disposes it once
/// <see cref="Done"/> completes.
/// </summary>
internal sealed class LoopUpgradedCaller : LoopStreamConnection
{
    private readonly Socket _caller;
    private readonly TaskCompletionSource<string> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile bool _callerAborted;
    private string _reason = "closed";

    public LoopUpgradedCaller(EventLoop loop, IByteStream stream, Socket caller)
        : base(loop, stream) => _caller = caller;

    /// <summary>Completes, with the end's reason as the task relay words it, once the relay has let the stream go.</summary>
    public Task<string> Done => _done.Task;

    protected override ProtocolErrorCode SocketFailureCode => ProtocolErrorCode.Cancelled;

    protected override bool OwnsStream => false;

    protected override bool EndsAtPeerEnd => true;

    /// <summary>Off the loop: from here a reset reaches this relay, and the loop takes the descriptor at its next turn.</summary>
    public void Start()
    {
        Stream.SetAbortListener(this); // a reset that came already is posted now, so the loop sees it before the start
        if (!Loop.Post(static state => ((LoopUpgradedCaller)state!).StartOnLoop(), this))
        {
            // The loop has stopped (the server is shutting down): nothing is relayed, both ends are cut.
            Stream.Reset(ProtocolErrorCode.Cancelled);
            RelayEnd.Reset(_caller);
            EndUnstarted(LoopRelayEnd.Failed(new LoopError(LoopErrorKind.LoopStopped, 0)));
        }
    }

    /// <summary>Kestrel aborted the caller's connection (its stop, after the drain): from any thread, the end on the loop.</summary>
    public void Abort()
    {
        _callerAborted = true;
        Loop.Post(static state => ((LoopUpgradedCaller)state!).AbortOnLoop(), this);
    }

    /// <summary>On the loop: the descriptor is the loop's from here; the backend's bytes that came meanwhile (in the stream's pipe) go first.</summary>
    private void StartOnLoop()
    {
        if (IsFinished)
        {
            return; // reset before the loop took it: OnAbortedBeforeConnected cut the caller
        }

        LoopSocket socket = LoopSocket.Adopt(Loop, _caller, this);
        Attach(socket, _caller, connected: true);
        Stream.TakeOverInbound(this);
    }

    private void AbortOnLoop()
    {
        if (!IsFinished)
        {
            Stream.Reset(ProtocolErrorCode.Cancelled);
            End(LoopRelayEnd.Aborted, reset: true);
        }
    }

    /// <summary>Reset before the loop took the descriptor: the caller is cut here.</summary>
    protected override void OnAbortedBeforeConnected()
    {
        RelayEnd.Reset(_caller);
        End(LoopRelayEnd.Aborted, reset: true);
    }

    /// <summary>Off the loop: the reason in the task relay's words (its log line, event 206).</summary>
    protected override void OnEnded(in LoopRelayEnd ending) => _reason = ending.Kind switch
    {
        LoopRelayEndKind.Closed => SocketEnded ? "closed" : "backend closed",
        _ when _callerAborted => "caller gone",
        LoopRelayEndKind.Aborted when Stream.ResetCode is { } code && Stream.Uplink.IsOpen => $"stream reset ({code})",
        LoopRelayEndKind.Aborted => "relay failed",
        _ => "caller gone",
    };

    protected override void OnReleased() => _done.TrySetResult(_reason);
}
