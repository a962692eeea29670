using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Tunnel2.Protocol.Relaying.OnLoop;

namespace Tunnel2.TunnelClient.Relay.Upgrades;

/// <summary>
/// An upgraded exchange's backend connection relayed on the client's event loop (<c>TunnelClient:Upgrades:Relay</c> =
/// <c>Loop</c>): after the 101 head, the backend's socket is taken over by the loop and relayed by the shared
/// <see cref="LoopStreamConnection"/>, as a raw TCP tunnel is, with no task per read. Ends as the task relay does: the
/// caller's END_STREAM shuts the backend's sending side, the backend's FIN goes up as END_STREAM; a reset from the
/// server (or the idle timeout, or a lost uplink) cuts the backend with a reset, and a backend that breaks resets the
/// stream with BackendAborted. The stream stays the exchange's: its owner disposes it once <see cref="Done"/> completes.
/// </summary>
internal sealed class LoopUpgradedConnection : LoopStreamConnection
{
    private readonly Socket _backend;
    private readonly TaskCompletionSource<LoopRelayEnd> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private LoopRelayEnd _ending;

    public LoopUpgradedConnection(EventLoop loop, IByteStream stream, Socket backend)
        : base(loop, stream) => _backend = backend;

    /// <summary>Completes, with how it ended, once the relay has let the stream go.</summary>
    public Task<LoopRelayEnd> Done => _done.Task;

    protected override ProtocolErrorCode SocketFailureCode => ProtocolErrorCode.BackendAborted;

    protected override bool OwnsStream => false;

    /// <summary>
    /// Off the loop, once the backend's early bytes have gone up: from here a reset reaches this connection (not the
    /// backend connection's listener), and the loop takes the socket over at its next turn.
    /// </summary>
    public void Start()
    {
        Stream.SetAbortListener(this); // a reset that came already is posted now, so the loop sees it before the start
        if (!Loop.Post(static state => ((LoopUpgradedConnection)state!).StartOnLoop(), this))
        {
            // The loop has stopped (the client is shutting down): nothing is relayed, both ends are cut.
            Stream.Reset(ProtocolErrorCode.Cancelled);
            RelayEnd.Reset(_backend);
            EndUnstarted(LoopRelayEnd.Failed(new LoopError(LoopErrorKind.LoopStopped, 0)));
        }
    }

    /// <summary>On the loop: the socket is the loop's from here; the caller's bytes that came meanwhile (in the stream's pipe) go first.</summary>
    private void StartOnLoop()
    {
        if (IsFinished)
        {
            return; // reset before the loop took it: OnAbortedBeforeConnected cut the backend
        }

        LoopSocket socket = LoopSocket.Adopt(Loop, _backend, this);
        Attach(socket, _backend, connected: true);
        Stream.TakeOverInbound(this);
    }

    /// <summary>Reset before the loop took the socket: the backend is cut here, as the backend connection's listener would.</summary>
    protected override void OnAbortedBeforeConnected()
    {
        RelayEnd.Reset(_backend);
        End(LoopRelayEnd.Aborted, reset: true);
    }

    protected override void OnEnded(in LoopRelayEnd ending) => _ending = ending;

    /// <summary>Off the loop, once the stream is let go (its listener cleared): the owner may dispose it from here.</summary>
    protected override void OnReleased() => _done.TrySetResult(_ending);
}
