using Tunnel2.Protocol.Heads;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// How the server's owner of a stream learns its response head. The reader takes the head when it arrives
/// (<see cref="OnResponseHead"/>) and hands it over once the batch of frames it came in is dispatched: a whole small
/// answer on the reader's own thread, so that the owner relays it without another thread-pool hand-off; anything else
/// on a thread-pool work item, so the reader never carries a long body. A failure (a reset, the uplink's close) fails
/// the wait at once, as the stream's state changes, and the owner's error path runs on the thread that failed it.
/// </summary>
public sealed partial class UplinkStream
{
    private ResponseHead? _arrivedHead;
    private HeadCompletion? _headCompletion;

    /// <summary>
    /// Whether the answer is whole and small: the head came, the body ended (or there is none) within one initial window,
    /// nothing was reset. Its owner then finds all of it buffered and relays it without waiting.
    /// </summary>
    internal bool IsWholeSmallAnswer
    {
        get
        {
            lock (_sync)
            {
                return (_state & (StreamState.RemoteEnded | StreamState.Aborted)) == StreamState.RemoteEnded
                    && _unconsumed <= _uplink.Settings.InitialStreamWindow;
            }
        }
    }

    /// <summary>
    /// Hands the arrived head to the owner (called by the reader loop after the batch it came in). With
    /// <paramref name="inline"/>, the owner's continuation runs on this thread; otherwise on a thread-pool work item.
    /// </summary>
    internal void DeliverResponseHead(bool inline)
    {
        if (inline)
        {
            _responseHead!.TrySetResult(_arrivedHead!);
        }
        else
        {
            DeliverLater();
        }
    }

    /// <summary>
    /// A TCP stream (server side) has no response head on the wire: its stand-in has arrived and is handed over as it
    /// opens, before the stream is in the table, so Data may come at once (<see cref="OnData"/> looks at the arrived head),
    /// no head timeout applies, a ResponseHead frame for it is a second head, and the reader never delivers one for it.
    /// </summary>
    private void TakeTcpStandInHead()
    {
        if (_responseHead is not null)
        {
            _arrivedHead = TcpResponseHead;
            _responseHead.TrySetResult(TcpResponseHead);
        }
    }

    private void DeliverLater()
    {
        // The work item holds the stream, so the object cannot serve another exchange before it ran.
        if (TryHold())
        {
            ThreadPool.UnsafeQueueUserWorkItem(_headCompletion ??= new HeadCompletion(this), preferLocal: false);
        }
    }

    /// <summary>One per stream object (they are pooled), so a head delivered on the pool costs no allocation.</summary>
    private sealed class HeadCompletion(UplinkStream stream) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            stream._responseHead?.TrySetResult(stream._arrivedHead!);

            stream.Release();
        }
    }
}
