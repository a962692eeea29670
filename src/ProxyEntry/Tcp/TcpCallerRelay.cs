using System.Net;
using System.Net.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Microsoft.Extensions.Logging;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// One caller of a session's TCP port and its stream: bytes both ways under the stream's windows. The caller's FIN goes
/// to the client as END_STREAM, and the client's END_STREAM (its target's FIN) shuts down the caller's receiving side:
/// each way closes on its own (half-close). A reset from the client (its target refused or broke), a lost uplink, the
/// caller vanishing or the idle timeout ends both ways at once, the caller's connection with a reset, and one log line.
/// </summary>
/// <param name="callerFailure">The caller's reset, if the dispatch's reads already met it (<see cref="TcpDispatch.CallerFailure"/>).</param>
internal sealed class TcpCallerRelay(
    string session, Socket caller, IPEndPoint? remote, IByteStream stream, ILogger logger, TcpMetrics metrics, SocketException? callerFailure = null)
    : ITcpCallerRelay, IStreamAbortListener
{
    private static readonly (string Cause, string Text) Closed = TcpCallerEnd.Closed;

    private readonly StreamIdleWatch _idle = new(stream);
    private volatile bool _idleClosed;

    public IPEndPoint? Caller => remote;

    public uint StreamId => stream.Id;

    public async Task RunAsync()
    {
        (string Cause, string Text) reason = Closed;
        metrics.Opened();
        try
        {
            stream.SetAbortListener(this);
            if (callerFailure is not null)
            {
                // The caller reset before its first bytes went up: nothing to relay.
                reason = Describe(callerSide: true, callerFailure, stream.ResetCode);
                stream.Reset(ProtocolErrorCode.Cancelled);
                Abort();
            }
            else
            {
                DuplexRelayResult result = await DuplexRelay.RunAsync(stream, RelayEnd.OfSocket(caller));
                if (result.FailedSide is { } side)
                {
                    reason = Describe(side == RelaySide.Local, result.Error, result.PeerReset);
                }
            }
        }
        finally
        {
            stream.ClearAbortListener();
            TcpLog.CallerEnded(logger, session, remote, stream.Id, reason.Text, stream.SentBytes, stream.ReceivedBytes);
            metrics.Ended(reason.Cause);
            stream.Dispose();
        }
    }

    /// <summary>The client reset the stream, or the uplink died: the caller's connection is cut (a reset, not a clean end).</summary>
    public void OnStreamAborted() => Abort();

    /// <summary>Sampled by the idle sweep (never concurrently): true once no byte moved either way for the timeout.</summary>
    public bool IsIdle(long now, long timeoutMs) => _idle.IsIdle(now, timeoutMs);

    public void CloseIdle()
    {
        _idleClosed = true;
        stream.Reset(ProtocolErrorCode.IdleTimeout);
        Abort();
    }

    /// <summary>Why the relay ended (a metric's cause and a log's text), judged before this side resets the stream: a reset found here came from the client.</summary>
    private (string Cause, string Text) Describe(bool callerSide, Exception? failure, ProtocolErrorCode? peerReset) =>
        _idleClosed ? TcpCallerEnd.Idle
        : failure is UplinkClosedException ? TcpCallerEnd.UplinkLost(failure.Message)
        : peerReset is { } code ? TcpCallerEnd.ClientReset(code)
        : callerSide ? TcpCallerEnd.CallerGone(failure?.Message ?? "reset")
        : TcpCallerEnd.CallerNotReading(failure?.Message ?? "reset");

    private void Abort() => RelayEnd.Reset(caller);
}
