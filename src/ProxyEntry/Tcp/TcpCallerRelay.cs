using System.Net;
using System.Net.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
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
    string session, Socket caller, IPEndPoint? remote, UplinkStream stream, ILogger logger, TcpMetrics metrics, SocketException? callerFailure = null)
    : IStreamAbortListener
{
    private static readonly (string Cause, string Text) Closed = ("closed", "closed by both sides");

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
            Task up = callerFailure is null ? SocketToStream.PumpAsync(caller, stream) : Task.FromException(callerFailure);
            Task down = CopyDownAsync();
            Task first = await Task.WhenAny(up, down);
            if (!first.IsCompletedSuccessfully)
            {
                reason = Describe(first == up, first.Exception?.InnerException);
                stream.Reset(ProtocolErrorCode.Cancelled);
                Abort();
            }

            // A clean end one way (a half-close) leaves the other way running until it ends too.
            await Observe(up);
            await Observe(down);
            if (reason == Closed && !(up.IsCompletedSuccessfully && down.IsCompletedSuccessfully))
            {
                reason = Describe(!up.IsCompletedSuccessfully, (up.IsCompletedSuccessfully ? down : up).Exception?.InnerException);
                stream.Reset(ProtocolErrorCode.Cancelled);
                Abort();
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

    private async Task CopyDownAsync()
    {
        await stream.CopyInputToAsync(caller, CancellationToken.None);
        caller.Shutdown(SocketShutdown.Send); // the target's FIN, passed on
    }

    /// <summary>Why the relay ended (a metric's cause and a log's text), judged before this side resets the stream: a reset found here came from the client.</summary>
    private (string Cause, string Text) Describe(bool callerSide, Exception? failure) =>
        _idleClosed ? ("idle-timeout", "idle timeout")
        : failure is UplinkClosedException ? ("uplink-lost", $"the uplink was lost ({failure.Message})")
        : stream.ResetCode is { } code ? ("client-reset", $"the client reset the stream ({code}{code switch
        {
            ProtocolErrorCode.BackendConnectFailed => ": its target refused the connection",
            ProtocolErrorCode.BackendAborted => ": its target broke the connection",
            _ => string.Empty,
        }})")
        : callerSide ? ("caller-gone", $"the caller went away ({failure?.Message ?? "reset"})")
        : ("caller-gone", $"the caller stopped reading ({failure?.Message ?? "reset"})");

    private void Abort()
    {
        try
        {
            caller.LingerState = new LingerOption(true, 0);
            caller.Close();
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // already closed
        }
    }

    private static async Task Observe(Task direction)
    {
        try
        {
            await direction;
        }
        catch (Exception ex) when (ex is IOException or InvalidOperationException or OperationCanceledException or ObjectDisposedException
                                   or StreamResetException or UplinkClosedException or SocketException)
        {
            // judged through the task's state
        }
    }
}
