using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Graceful drain (docs/protocol.md §6): GoAway, then a Ping whose Pong proves the peer has read the GoAway (frames are
/// handled in order, so every stream the peer opened before it arrives first), then the open streams finish, the
/// frames they queued last are flushed, and the uplink closes.
/// </summary>
public sealed partial class Uplink
{
    /// <summary>The payload of the Ping that follows a GoAway; keep-alive Pings count up from 1 and never reach it.</summary>
    internal const ulong DrainPingPayload = 0xD7A1_4E00_0000_0001;

    private readonly TaskCompletionSource _drainAcknowledged = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>This end announced it is leaving (<see cref="BeginDrain"/>).</summary>
    public bool IsDraining => _localDraining;

    /// <summary>Completes when the peer answered the Ping sent after this end's GoAway, i.e. it has seen the GoAway.</summary>
    public Task DrainAcknowledged => _drainAcknowledged.Task;

    /// <summary>Announces that this end opens or accepts no new streams; open ones finish normally.</summary>
    public void BeginDrain()
    {
        lock (_openLock)
        {
            // Under the open lock: a stream this end opens is either already counted or refused.
            if (_localDraining)
            {
                return;
            }

            _localDraining = true;
        }

        TryEnqueue(OutboundFrame.GoAway(_streams.LastStreamId, ProtocolErrorCode.NoError));
        TryEnqueue(OutboundFrame.Ping(DrainPingPayload));
    }

    /// <summary>
    /// Drains and closes the uplink: <see cref="BeginDrain"/>, wait until the peer has seen the GoAway and every open stream
    /// has finished (or <paramref name="timeout"/> passes), flush what is queued, close.
    /// </summary>
    /// <returns>True when every stream finished before the deadline; false when some were cut.</returns>
    public async Task<bool> DrainAsync(TimeSpan timeout)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        Log.Draining(_logger, Name, ActiveStreamCount, (long)timeout.TotalMilliseconds);
        BeginDrain();

        await Task.WhenAny(_drainAcknowledged.Task, Task.Delay(Remaining(deadline), _closedToken)).ConfigureAwait(false);
        // Woken by the last stream's removal, or by the uplink's close (its streams then fail and go).
        await _streams.WaitEmptyAsync(Remaining(deadline), _closedToken).ConfigureAwait(false);

        int left = ActiveStreamCount;
        string reason = left == 0 ? "drained" : "drain deadline passed";
        Volatile.Write(ref _drainCloseReason, reason);
        if (IsOpen)
        {
            // The finished streams' last frames may still be queued: let the writer send them before the close cuts it.
            _scheduler.Complete();
            if (_writer is { } writer)
            {
                await Task.WhenAny(writer, Task.Delay(Remaining(deadline) + WriterStopGrace)).ConfigureAwait(false);
            }
        }

        if (left == 0)
        {
            Log.Drained(_logger, Name);
        }
        else
        {
            Log.DrainTimedOut(_logger, Name, left);
        }

        Close(reason);
        return left == 0;
    }

    private void OnPong(ulong payload)
    {
        if (payload == DrainPingPayload)
        {
            _drainAcknowledged.TrySetResult();
        }
    }

    private static TimeSpan Remaining(long deadline) => TimeSpan.FromMilliseconds(Math.Max(0, deadline - Environment.TickCount64));
}
