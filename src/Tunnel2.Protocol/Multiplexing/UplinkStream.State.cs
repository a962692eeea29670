using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Tcp;

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

/// <summary>The stream's state and the one function that changes it; when the object may serve another exchange.</summary>
internal sealed partial class UplinkStream
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
    public bool HasSentEnd => (State & (StreamState.LocalEnded | StreamState.Aborted)) == StreamState.LocalEnded;

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

        // Last: the owner's wait runs its continuation on this thread (UplinkStream.cs), after everyone else
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

    // When a stream object may serve another exchange. Everyone who may still touch the stream holds it:
    // - the uplink's table, until both directions ended (StreamState.Removed);
    // - its owner (the server's forwarder, the client's relay), until it disposes the stream
    // (StreamState.Disposed); the owner never touches it after that;
    // - the writer's lane, while the stream has frames queued (from the frame that lines it up to the one that empties it);
    // - each body loop (UplinkStream.Outbound.cs, UplinkStream.Inbound.cs), for as long as it runs, even one its owner stopped waiting for;
    // - a walk of the table from outside the reader (keep-alive, close), for one visit (TryHold).
    // When the last hold goes, the stream goes to its uplink's UplinkStreamPool, which clears it only on the
    // reader loop between two batches of frames: the reader reaches streams through the table without a hold, but never
    // across batches. A stream that does not pass TryClearForReuse's checks is left to the collector.

    /// <summary>Held by the table and the owner from the start.</summary>
    private const int InitialHolds = 2;

    private int _holds;

    /// <summary>The holds on the stream right now (for tests and diagnostics).</summary>
    internal int Holds => Volatile.Read(ref _holds);

    /// <summary>A new exchange on <paramref name="uplink"/>: a stream from its pool when one is free, else a new one.</summary>
    /// <param name="tcp">The caller of a raw TCP stream (version 5); null for an HTTP exchange.</param>
    internal static UplinkStream Start(Uplink uplink, uint id, RequestHead? requestHead, bool requestHasBody = false, bool localEnded = false, TcpStreamOpen? tcp = null)
    {
        if (!uplink.StreamPool.TryRent(out UplinkStream? stream))
        {
            stream = new UplinkStream(uplink);
        }

        stream!.Begin(id, requestHead, requestHasBody, localEnded);
        stream.Tcp = tcp;
        if (tcp is not null)
        {
            stream.TakeTcpStandInHead();
        }

        return stream;
    }

    /// <summary>Sets every per-exchange field; the object is this caller's alone until it is added to the table.</summary>
    private void Begin(uint id, RequestHead? requestHead, bool requestHasBody, bool localEnded)
    {
        _state = localEnded ? StreamState.LocalEnded : StreamState.Open;
        _resetCode = null;
        Id = id;
        RequestHead = requestHead;
        RequestHasBody = requestHasBody;
        _sendWindow.Reset(_uplink.Settings.InitialStreamWindow);
        _receiveWindow = _uplink.Settings.InitialStreamWindow;
        _uplink.AddReceiveCredit(_receiveWindow);
        _unconsumed = 0;
        _piped = 0;
        _pipedTotal = 0;
        _bodySent = null;
        _sentOwed = 0;
        _sentMark = 0;
        _receivedBytes = 0;
        _sentBytes = 0;
        _headWaitsForBody = false;
        _ownerOnLoop = false;
        if (_uplink.Role == UplinkRole.Server)
        {
            // Completed by the reader on its own thread for a whole small answer, else on a work item (UplinkStream.cs).
            _responseHead = new TaskCompletionSource<ResponseHead>();
            _openedAt = Environment.TickCount64;
        }

        Volatile.Write(ref _holds, InitialHolds);
    }

    /// <summary>Takes a hold for someone who already holds the stream (a body loop, the writer's lane).</summary>
    private void Hold()
    {
        if (Interlocked.Increment(ref _holds) == 1)
        {
            // Nobody held it, so nobody may take a hold this way: a caller is using a stream after its owner let it go.
            // The count goes back as it was (without Release, which would hand the stream to the pool a second time).
            Interlocked.Decrement(ref _holds);
            throw new InvalidOperationException($"Stream {Id} was used after it was finished.");
        }
    }

    /// <summary>
    /// Takes a hold unless the stream is finished; for whoever reaches it through the table outside the reader loop. The
    /// hold keeps it on one exchange until <see cref="Release"/>, so a check and what follows from it apply to the same one.
    /// </summary>
    internal bool TryHold()
    {
        int holds = Volatile.Read(ref _holds);
        while (holds > 0)
        {
            int seen = Interlocked.CompareExchange(ref _holds, holds + 1, holds);
            if (seen == holds)
            {
                return true;
            }

            holds = seen;
        }

        return false;
    }

    internal void Release()
    {
        if (Interlocked.Decrement(ref _holds) == 0)
        {
            // The inbound reader is completed here, not at Dispose: a body loop's read that the peer's END_STREAM woke
            // and that finished after the reader was completed would leave the pipe "reading" through its Reset (which
            // does not clear that), and the stream's next exchange could not read its own body. No loop runs now.
            _inbound.Reader.Complete();
            _uplink.StreamPool.OnFinished(this);
        }
    }

    /// <summary>
    /// Clears the stream for its next exchange (on the reader loop, by <see cref="UplinkStreamPool.RecycleFinished"/>);
    /// false, leaving it untouched, unless it is in the state a finished exchange leaves: both directions ended, out of
    /// the table, disposed by its owner, nothing queued and no hold taken since.
    /// </summary>
    internal bool TryClearForReuse()
    {
        const StreamState finished = StreamState.LocalEnded | StreamState.RemoteEnded | StreamState.Removed | StreamState.Disposed;
        lock (_sync)
        {
            if (Volatile.Read(ref _holds) != 0 || (_state & finished) != finished)
            {
                return false;
            }
        }

        lock (_outboundLock)
        {
            if (_scheduled || _outbound is { Count: > 0 })
            {
                return false;
            }
        }

        // Both ends of the pipe were completed (the writer at RemoteEnded, the reader at the last Release), which Reset requires.
        _inbound.Reset();
        _responseHead = null;
        _arrivedHead = null;
        _abortListener = null;
        _sink = null;
        RequestHead = null;
        Tcp = null;
        return true;
    }
}
