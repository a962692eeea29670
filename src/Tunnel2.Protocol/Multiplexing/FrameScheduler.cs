using System.Collections.Concurrent;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Decides which frame the uplink's writer sends next, so that no stream waits behind another's bulk data:
/// <list type="number">
/// <item>control frames and heads (WindowUpdate, Reset, Ping, Pong, GoAway, RequestHead, ResponseHead), first in first out;</item>
/// <item>data of <em>light</em> streams, which have sent less than <see cref="LightStreamBytes"/> so far: a small answer
/// overtakes every bulk transfer queued before it;</item>
/// <item>data of bulk streams, one frame per stream in turn (round robin), so bulk streams share the uplink fairly.</item>
/// </list>
/// Each stream keeps its own data frames in order (<see cref="UplinkStream"/>); the scheduler queues streams, not frames.
/// A stream's head is queued before its first data frame, and the writer looks at the control lane again after it
/// picks a stream, so a head always goes out before its stream's data.
/// </summary>
internal sealed class FrameScheduler : IDisposable
{
    /// <summary>Streams that have sent less than this go in the light lane.</summary>
    public const int LightStreamBytes = 64 * 1024;

    private readonly ConcurrentQueue<OutboundFrame> _control = new();
    private readonly ConcurrentQueue<UplinkStream> _light = new();
    private readonly ConcurrentQueue<UplinkStream> _bulk = new();
    private readonly SemaphoreSlim _signal = new(0);
    private int _signaled;
    private volatile bool _completed;
    private int _queuedPongs;
    private UplinkStream? _picked;

    /// <param name="queuedDataLimit">Most body bytes read ahead of the writer (<see cref="UplinkSettings.QueuedDataLimit"/>).</param>
    public FrameScheduler(long queuedDataLimit = UplinkSettings.DefaultQueuedDataLimit) => DataBudget = new QueuedDataBudget(queuedDataLimit);

    /// <summary>Room for body bytes read from a source before the writer takes them.</summary>
    public QueuedDataBudget DataBudget { get; }

    /// <summary>Wakes a writer that does not wait on <see cref="WaitAsync"/> (the event loop's), instead of the signal. Set once, before any frame.</summary>
    public Action? WakeHook { get; set; }

    /// <summary>No more frames are accepted; the writer sends what is queued and stops.</summary>
    public bool IsCompleted => _completed;

    /// <summary>Pongs queued and not yet written: a peer that sends Pings faster than it reads our answers runs this up.</summary>
    public int QueuedPongs => Volatile.Read(ref _queuedPongs);

    /// <returns>False when the scheduler is completed (the frame was not queued; its buffer is the caller's).</returns>
    /// <param name="wake">False when the caller itself then sends or wakes the writer (<see cref="UplinkFrameWriter.SendNowOrWake"/>).</param>
    public bool TryEnqueueControl(in OutboundFrame frame, bool wake = true)
    {
        if (_completed)
        {
            return false;
        }

        if (frame.Type == Frames.FrameType.Pong)
        {
            Interlocked.Increment(ref _queuedPongs);
        }

        _control.Enqueue(frame);
        if (wake)
        {
            Wake();
        }

        return true;
    }

    /// <summary>A stream has data queued and is not yet in a lane.</summary>
    /// <param name="wake">False when the caller itself then sends or wakes the writer (<see cref="UplinkFrameWriter.SendNowOrWake"/>).</param>
    public void Schedule(UplinkStream stream, bool wake = true)
    {
        (stream.SentBytes < LightStreamBytes ? _light : _bulk).Enqueue(stream);
        if (wake)
        {
            Wake();
        }
    }

    /// <summary>Whether anything may be queued (a hint: read without the writer's ownership).</summary>
    public bool HasQueued => !_control.IsEmpty || !_light.IsEmpty || !_bulk.IsEmpty;

    /// <summary>Stops accepting frames and wakes the writer so it can finish.</summary>
    public void Complete()
    {
        _completed = true;
        DataBudget.Close(new UplinkClosedException("The uplink no longer sends."));
        Wake();
    }

    /// <summary>Waits until something may be queued or the scheduler is completed.</summary>
    public async ValueTask WaitAsync()
    {
        await _signal.WaitAsync().ConfigureAwait(false);
        Volatile.Write(ref _signaled, 0);
    }

    /// <summary>The next frame to write, by the lanes' order; false when nothing is queued. Called by the writer only.</summary>
    public bool TryDequeue(out OutboundFrame frame)
    {
        while (true)
        {
            if (TryDequeueControl(out frame))
            {
                return true;
            }

            UplinkStream? stream = _picked;
            if (stream is null)
            {
                if (!_light.TryDequeue(out stream) && !_bulk.TryDequeue(out stream))
                {
                    return false;
                }

                // Look at the control lane once more: this stream's head may have been queued there just before its data.
                _picked = stream;
                continue;
            }

            _picked = null;
            if (stream.TryTakeQueuedData(out frame, out bool more))
            {
                if (more)
                {
                    Requeue(stream);
                }

                return true;
            }
        }
    }

    /// <summary>Gives back the buffers of every frame still queued (after the writer stopped).</summary>
    public void DropQueued()
    {
        while (_control.TryDequeue(out OutboundFrame frame))
        {
            frame.ReturnBuffer();
        }

        _picked?.DropQueuedData();
        _picked = null;
        while (_light.TryDequeue(out UplinkStream? stream) || _bulk.TryDequeue(out stream))
        {
            stream.DropQueuedData();
        }
    }

    private bool TryDequeueControl(out OutboundFrame frame)
    {
        if (!_control.TryDequeue(out frame))
        {
            return false;
        }

        if (frame.Type == Frames.FrameType.Pong)
        {
            Interlocked.Decrement(ref _queuedPongs);
        }

        return true;
    }

    /// <summary>A stream keeps its place in the rotation: it goes to the back of the lane its bytes sent so far put it in.</summary>
    private void Requeue(UplinkStream stream) => (stream.SentBytes < LightStreamBytes ? _light : _bulk).Enqueue(stream);

    /// <summary>Called by the uplink once its writer has stopped.</summary>
    public void Dispose() => _signal.Dispose();

    /// <summary>Has the writer's loop look at the lanes again (at once if it waits, else after its current batch).</summary>
    public void Wake()
    {
        if (WakeHook is { } hook)
        {
            hook();
            return;
        }

        if (Interlocked.Exchange(ref _signaled, 1) == 0)
        {
            try
            {
                _signal.Release();
            }
            catch (ObjectDisposedException)
            {
                // A stream's owner queued after the uplink was disposed: no writer is left to wake, and the frame is dropped with the uplink.
            }
        }
    }
}
