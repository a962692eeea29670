using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The stream's own queue of frames for the uplink's writer: its data frames, in order, and the END_STREAM and Reset
/// that must follow them. The <see cref="FrameScheduler"/> takes one frame at a time from the streams it has lined up,
/// so one stream's backlog never sits in front of another stream's frames.
/// </summary>
public sealed partial class UplinkStream
{
    private readonly Lock _outboundLock = new();
    private Queue<OutboundFrame>? _outbound;
    private bool _scheduled;
    private long _sentBytes;

    /// <summary>Body bytes the writer has taken from this stream so far (it decides the stream's lane).</summary>
    public long SentBytes => Volatile.Read(ref _sentBytes);

    /// <summary>Heads go in the uplink's control lane; body, end-of-stream and Reset frames in this stream's own queue.</summary>
    /// <exception cref="UplinkClosedException">The uplink no longer sends (the frame's buffer has been returned).</exception>
    private void Queue(in OutboundFrame frame)
    {
        if (frame.Type is FrameType.RequestHead or FrameType.ResponseHead)
        {
            bool endsStep = (frame.Flags & FrameFlags.EndStream) != 0;
            _uplink.Enqueue(frame, wake: !endsStep && !_headWaitsForBody);
            if (endsStep)
            {
                _uplink.SendNowOrWake();
            }
        }
        else
        {
            QueueOutbound(frame);
        }
    }

    /// <summary>Queues a frame behind this stream's earlier ones and lines the stream up for the writer.</summary>
    /// <exception cref="UplinkClosedException">The uplink no longer sends (the frame's buffer has been returned).</exception>
    private void QueueOutbound(in OutboundFrame frame)
    {
        bool schedule;
        bool endsStep = (frame.Flags & FrameFlags.EndStream) != 0;
        lock (_outboundLock)
        {
            if (_uplink.Scheduler.IsCompleted)
            {
                Discard(frame);
                throw new UplinkClosedException(_uplink.CloseReason ?? "The uplink closed.");
            }

            (_outbound ??= new Queue<OutboundFrame>(4)).Enqueue(frame);
            schedule = !_scheduled;
            if (schedule)
            {
                _scheduled = true;
                Hold(); // the writer's lane holds the stream until it has taken the last queued frame
            }
        }

        _headWaitsForBody = false; // any frame of this stream gets the writer going (or sends), so its head goes too
        if (schedule)
        {
            _uplink.Scheduler.Schedule(this, wake: !endsStep);
        }

        if (endsStep)
        {
            // The last frame of a step (the END_STREAM of a small answer): sent on this thread when the writer is idle.
            _uplink.SendNowOrWake();
        }
    }

    /// <summary>The writer takes this stream's next frame; <paramref name="more"/> says whether it stays lined up.</summary>
    internal bool TryTakeQueuedData(out OutboundFrame frame, out bool more)
    {
        frame = default;
        bool taken;
        lock (_outboundLock)
        {
            taken = _outbound is not null && _outbound.TryDequeue(out frame);

            more = taken && _outbound!.Count > 0;
            _scheduled = more;
        }

        if (taken && frame.Type == FrameType.Data)
        {
            Interlocked.Add(ref _sentBytes, frame.PayloadLength);
            if (frame.HoldsQueuedDataBudget)
            {
                _uplink.Scheduler.DataBudget.Release(frame.PayloadLength);
            }
        }

        if (!more)
        {
            // Out of the lane, last: past this point the writer touches only the frame it took, not the stream.
            Release();
        }

        return taken;
    }

    /// <summary>Drops what is still queued: the peer will not take it (it reset the stream, or the uplink is gone).</summary>
    internal void DropQueuedData()
    {
        lock (_outboundLock)
        {
            if (_outbound is null)
            {
                return;
            }

            while (_outbound.TryDequeue(out OutboundFrame frame))
            {
                Discard(frame);
            }
        }
    }
}
