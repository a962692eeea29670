using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// When a stream object may serve another exchange. Everyone who may still touch the stream holds it:
/// <list type="bullet">
/// <item>the uplink's table, until both directions ended (<see cref="StreamState.Removed"/>);</item>
/// <item>its owner (the server's forwarder, the client's relay), until it disposes the stream
/// (<see cref="StreamState.Disposed"/>); the owner never touches it after that;</item>
/// <item>the writer's lane, while the stream has frames queued (from the frame that lines it up to the one that empties it);</item>
/// <item>each body loop (<c>UplinkStream.Body.cs</c>), for as long as it runs, even one its owner stopped waiting for;</item>
/// <item>a walk of the table from outside the reader (keep-alive, close), for one visit (<see cref="TryHold"/>).</item>
/// </list>
/// When the last hold goes, the stream goes to its uplink's <see cref="UplinkStreamPool"/>, which clears it only on the
/// reader loop between two batches of frames: the reader reaches streams through the table without a hold, but never
/// across batches. A stream that does not pass <see cref="TryClearForReuse"/>'s checks is left to the collector.
/// </summary>
public sealed partial class UplinkStream
{
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
        _receivedBytes = 0;
        _sentBytes = 0;
        _headWaitsForBody = false;
        if (_uplink.Role == UplinkRole.Server)
        {
            // Completed by the reader on its own thread for a whole small answer, else on a work item (UplinkStream.ResponseHead.cs).
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

        // Both ends of the pipe were completed (the writer at RemoteEnded, the reader at Dispose), which Reset requires.
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
