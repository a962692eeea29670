using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>Where a stream is in its life. Flags are only ever added, each once, and only by <see cref="UplinkStream"/>'s Transition.</summary>
[Flags]
internal enum StreamState
{
    Open = 0,

    /// <summary>This side sent its last frame (END_STREAM or a Reset), or the stream was aborted: nothing more goes out.</summary>
    LocalEnded = 1 << 0,

    /// <summary>No more body comes from the peer: its END_STREAM arrived, or the stream was aborted. Input's writer is completed.</summary>
    RemoteEnded = 1 << 1,

    /// <summary>Reset by either side, or the uplink died; <see cref="UplinkStream.ResetCode"/> says why. Implies both ended.</summary>
    Aborted = 1 << 2,

    /// <summary>Both directions ended: the stream left the uplink's table and gave back the credit it did not use.</summary>
    Removed = 1 << 3,

    /// <summary>The owner disposed the stream and completed Input's reader: late body bytes are dropped, not buffered.</summary>
    Disposed = 1 << 4,
}

/// <summary>Why a stream is aborted, and whether the frames it still has queued are dropped (the peer will not read them).</summary>
internal readonly record struct StreamAbort(ProtocolErrorCode Code, Exception Reason, bool DropQueued);

/// <summary>The stream's state and the one function that changes it.</summary>
public sealed partial class UplinkStream
{
    private StreamState _state;
    private ProtocolErrorCode? _resetCode;

    /// <summary>The state right now (for tests and diagnostics; decisions read it under the lock).</summary>
    internal StreamState State
    {
        get
        {
            lock (_sync)
            {
                return _state;
            }
        }
    }

    /// <summary>This side's END_STREAM went out: its sending half ended cleanly, not with a reset.</summary>
    internal bool HasSentEnd => (State & (StreamState.LocalEnded | StreamState.Aborted)) == StreamState.LocalEnded;

    /// <summary>
    /// The one place the stream's state changes. Under the stream's lock, unless a flag of <paramref name="refuseIf"/> is
    /// already set, it adds <paramref name="add"/>; then it carries out what each newly set flag entails, in this order:
    /// <list type="number">
    /// <item><see cref="StreamState.RemoteEnded"/> completes Input's writer (under the lock; with the abort's reason if any);</item>
    /// <item><see cref="StreamState.Aborted"/> (given by <paramref name="abort"/>, and ending both directions) records the
    /// code, drops what the stream still has queued if asked, and tells everyone who waits: the send window, the
    /// response head, the abort listener, the <see cref="Aborted"/> token;</item>
    /// <item><paramref name="send"/>, if given, is queued;</item>
    /// <item>once both directions have ended, <see cref="StreamState.Removed"/> gives the credit the peer never used back
    /// to the uplink's budget (under the lock) and takes the stream out of the uplink's table, last: whoever waits for
    /// the table to empty (a drain, a test) finds every stream's last frame queued and every waiter told.</item>
    /// </list>
    /// </summary>
    /// <param name="added">The flags this call set (some of <paramref name="add"/> may have been set before).</param>
    /// <returns>False when refused: nothing changed, nothing was queued (<paramref name="send"/>'s buffer is still the caller's).</returns>
    /// <exception cref="UplinkClosedException">The uplink no longer sends; <paramref name="send"/>'s buffer was returned.</exception>
    private bool TryTransition(StreamState add, StreamState refuseIf, out StreamState added, StreamAbort? abort = null, OutboundFrame? send = null)
    {
        lock (_sync)
        {
            if ((_state & refuseIf) != 0)
            {
                added = StreamState.Open;
                return false;
            }

            if (abort is not null)
            {
                add |= StreamState.Aborted | StreamState.LocalEnded | StreamState.RemoteEnded;
            }

            added = add & ~_state;
            _state |= added;
            if ((added & StreamState.Aborted) != 0)
            {
                _resetCode = abort!.Value.Code;
            }

            if ((added & StreamState.RemoteEnded) != 0)
            {
                _inbound.Writer.Complete(abort?.Reason);
            }

            const StreamState bothEnded = StreamState.LocalEnded | StreamState.RemoteEnded;
            if ((_state & (bothEnded | StreamState.Removed)) == bothEnded)
            {
                _state |= StreamState.Removed;
                added |= StreamState.Removed;
                _uplink.AddReceiveCredit(-_receiveWindow);
                _receiveWindow = 0;
            }
        }

        try
        {
            if ((added & StreamState.Aborted) != 0)
            {
                TellAborted(abort!.Value);
            }

            if (send is { } frame)
            {
                Queue(frame);
            }
        }
        finally
        {
            if ((added & StreamState.Removed) != 0)
            {
                _uplink.RemoveStream(this);
                Release(); // the table's hold
            }
        }

        return true;
    }

    private void TellAborted(in StreamAbort abort)
    {
        if (abort.DropQueued)
        {
            DropQueuedData();
        }

        _sendWindow.Fault(abort.Reason);
        Interlocked.Exchange(ref _abortListener, null)?.OnStreamAborted();
        try
        {
            Volatile.Read(ref _aborted)?.Cancel();
        }
        catch (Exception ex) when (ex is ObjectDisposedException or AggregateException)
        {
            // Disposed concurrently by the stream's owner, or a listener was already torn down: nobody is left to tell.
        }

        // Last: the owner's wait runs its continuation on this thread (UplinkStream.ResponseHead.cs), after everyone else
        // was told. A head that came before the abort, in the batch the reader has not finished, is still the answer's.
        if (Volatile.Read(ref _arrivedHead) is { } arrived)
        {
            _responseHead?.TrySetResult(arrived);
        }
        else
        {
            _responseHead?.TrySetException(abort.Reason);
        }
    }
}
