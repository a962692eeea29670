using System.IO.Pipelines;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink's one writer: takes frames in the order the <see cref="FrameScheduler"/> picks, coalesces them into few
/// transport writes, and on the way out gives the last buffered bytes one bounded flush. One owner writes at a time: the
/// loop, or, when the loop is idle, a thread that has just queued the last frame of a step (<see cref="SendNowOrWake"/>).
/// </summary>
internal sealed class UplinkFrameWriter
{
    /// <summary>Flush the transport at least every this many bytes while frames keep coming.</summary>
    private const int MaxUnflushedBytes = 64 * 1024;

    /// <summary>How long the last flush may wait for a peer that does not read (e.g. frozen, buffers full).</summary>
    private static readonly TimeSpan FinalFlushTimeout = TimeSpan.FromMilliseconds(500);

    private const int Free = 0;
    private const int Taken = 1;

    private readonly PipeWriter _output;
    private readonly FrameScheduler _scheduler;
    private readonly Uplink _uplink;
    private long _lastSentTicks = Environment.TickCount64;

    /// <summary>Who writes to the output: <see cref="Free"/>, or <see cref="Taken"/> by the loop or an inline sender.</summary>
    private int _owner;

    /// <summary>1 when an inline sender left its pending flush (<see cref="_handedFlush"/>), and the output with it, to the loop.</summary>
    private int _flushHandedOver;

    private ValueTask<FlushResult> _handedFlush;

    public UplinkFrameWriter(PipeWriter output, FrameScheduler scheduler, Uplink uplink)
    {
        _output = output;
        _scheduler = scheduler;
        _uplink = uplink;
    }

    /// <summary>When the writer last handed bytes to the transport (<see cref="Environment.TickCount64"/>).</summary>
    public long LastSentTicks => Volatile.Read(ref _lastSentTicks);

    /// <summary>Writes until the scheduler is completed and empty, or the transport fails (which closes the uplink).</summary>
    public async Task RunAsync()
    {
        bool owned = false;
        try
        {
            while (true)
            {
                if (!owned && !(owned = await TakeOutputAsync().ConfigureAwait(false)))
                {
                    return;
                }

                // Read before taking frames: once completion is seen, every frame queued before it is visible too.
                bool completed = _scheduler.IsCompleted;
                (int unflushed, int frames) = WriteQueued();
                if (unflushed > 0 && unflushed < MaxUnflushedBytes)
                {
                    // A batch under 64 KiB waits one thread-pool turn for frames that other threads are about to queue,
                    // then goes out in one send (docs/benchmarks/2026-11-24-uplink-v2.md, sitting C); under Kestrel's
                    // upgrade its I/O queue had merged flushes this way.
                    await Task.Yield();
                    (int more, int moreFrames) = WriteQueued(unflushed);
                    (unflushed, frames) = (unflushed + more, frames + moreFrames);
                }

                if (unflushed == 0)
                {
                    if (completed)
                    {
                        return; // still owned: no inline sender starts after this
                    }

                    owned = false;
                    Volatile.Write(ref _owner, Free);
                    await _scheduler.WaitAsync().ConfigureAwait(false);
                    continue;
                }

                UplinkMetrics.Sent(frames, unflushed);
                if (!await FinishFlushAsync(_output.FlushAsync()).ConfigureAwait(false))
                {
                    return;
                }
            }
        }
        catch (Exception ex) when (Uplink.IsTransportFailure(ex) || ex is InvalidOperationException)
        {
            _uplink.Close($"transport error while writing: {ex.Message}");
        }
        finally
        {
            _scheduler.DropQueued();
            await CompleteOutputAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Sends what is queued on the caller's thread when the writer is idle (its loop waits and no batch is forming: at
    /// most <see cref="UplinkSettings.InlineSendMaxStreams"/> streams open), as long as the transport takes the bytes at
    /// once; otherwise wakes the loop. Called by whoever queued the last frame
    /// of a step (a request head without body, the END_STREAM of an answer), so that a small exchange goes out without a
    /// hand-off to the writer's loop. A flush that does not complete at once is handed to the loop, never waited for here.
    /// </summary>
    public void SendNowOrWake()
    {
        // With more streams open, other frames are about to come: the loop's batch sends them together in fewer sends
        // (sending every step inline cost a fifth of the throughput under saturation, 2026-11-27-handoffs.md).
        if (_scheduler.IsCompleted || _uplink.ActiveStreamCount > _uplink.Settings.InlineSendMaxStreams
            || Interlocked.CompareExchange(ref _owner, Taken, Free) != Free)
        {
            _scheduler.Wake(); // the loop is at work (a batch is forming), the uplink is busy, or it closes: the loop sends it
            return;
        }

        try
        {
            (int unflushed, int frames) = WriteQueued();
            if (unflushed > 0)
            {
                UplinkMetrics.Sent(frames, unflushed);
                ValueTask<FlushResult> flush = _output.FlushAsync();
                if (!flush.IsCompleted)
                {
                    _handedFlush = flush;
                    Volatile.Write(ref _flushHandedOver, 1); // the output stays taken: the loop owns it from here
                    _scheduler.Wake();
                    return;
                }

                OnFlushed(flush.GetAwaiter().GetResult());
            }
        }
        catch (Exception ex) when (Uplink.IsTransportFailure(ex) || ex is InvalidOperationException)
        {
            _uplink.Close($"transport error while writing: {ex.Message}");
        }

        Volatile.Write(ref _owner, Free);
        if (_scheduler.HasQueued || _scheduler.IsCompleted)
        {
            _scheduler.Wake(); // frames queued while this thread wrote, whose senders found the writer taken
        }
    }

    /// <summary>Takes frames in the scheduler's order and writes them to the output, up to the batch's byte limit.</summary>
    private (int Bytes, int Frames) WriteQueued(int alreadyWritten = 0)
    {
        int bytes = 0;
        int frames = 0;
        while (alreadyWritten + bytes < MaxUnflushedBytes && _scheduler.TryDequeue(out OutboundFrame frame))
        {
            bytes += frame.TotalLength;
            frames++;
            frame.WriteTo(_output);
        }

        return (bytes, frames);
    }

    /// <returns>False when the transport no longer takes writes (the uplink has been closed).</returns>
    private async ValueTask<bool> FinishFlushAsync(ValueTask<FlushResult> flush) => OnFlushed(await flush.ConfigureAwait(false));

    private bool OnFlushed(FlushResult flush)
    {
        Volatile.Write(ref _lastSentTicks, Environment.TickCount64);
        if (flush.IsCanceled || flush.IsCompleted)
        {
            _uplink.Close("transport stopped accepting writes");
            return false;
        }

        return true;
    }

    /// <summary>
    /// Takes the output for the loop: once it is free, or handed over with an inline sender's pending flush (which it
    /// finishes first). While an inline sender writes, waits to be woken; once the uplink closes, waits for that sender
    /// to let go instead (<see cref="TakeOverFromInlineSender"/>). False when the transport no longer takes writes.
    /// </summary>
    private async ValueTask<bool> TakeOutputAsync()
    {
        while (true)
        {
            bool completed = _scheduler.IsCompleted;
            bool handedOver = Interlocked.Exchange(ref _flushHandedOver, 0) == 1;
            if (!handedOver && Interlocked.CompareExchange(ref _owner, Taken, Free) != Free)
            {
                if (!completed)
                {
                    await _scheduler.WaitAsync().ConfigureAwait(false); // the inline sender wakes the loop if it leaves frames
                    continue;
                }

                TakeOverFromInlineSender(out handedOver);
            }

            return !handedOver || await FinishFlushAsync(_handedFlush).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// The uplink closes while an inline sender writes: waits (it never blocks) until it lets go of the output or hands
    /// its flush over, so that the loop's last flush and completion never overlap its writes.
    /// </summary>
    private void TakeOverFromInlineSender(out bool handedOver)
    {
        var spin = new SpinWait();
        while (true)
        {
            if (Interlocked.Exchange(ref _flushHandedOver, 0) == 1)
            {
                handedOver = true;
                return;
            }

            if (Interlocked.CompareExchange(ref _owner, Taken, Free) == Free)
            {
                handedOver = false;
                return;
            }

            spin.SpinOnce();
        }
    }

    /// <summary>Wakes a flush that waits for a peer that does not read (the uplink is closing).</summary>
    public void CancelPendingFlush() => _output.CancelPendingFlush();

    /// <summary>
    /// Completes the transport's output. What is still buffered (e.g. the GoAway of a protocol error) gets one bounded,
    /// cancellable flush; if the peer does not take it in time it is dropped, and the output is completed with an error
    /// so a stream-backed writer does not try again with a write nothing could stop.
    /// </summary>
    private async Task CompleteOutputAsync()
    {
        bool flushed = false;
        using (var deadline = new CancellationTokenSource(FinalFlushTimeout))
        {
            // Two tries: the first may only report the CancelPendingFlush of the close itself.
            for (int attempt = 0; attempt < 2 && !flushed; attempt++)
            {
                try
                {
                    FlushResult result = await _output.FlushAsync(deadline.Token).ConfigureAwait(false);
                    flushed = !result.IsCanceled || result.IsCompleted;
                }
                catch (Exception ex) when (Uplink.IsTransportFailure(ex) || ex is InvalidOperationException)
                {
                    break;
                }
            }
        }

        try
        {
            await _output.CompleteAsync(flushed ? null : new UplinkClosedException(_uplink.CloseReason ?? "closed")).ConfigureAwait(false);
        }
        catch (Exception ex) when (Uplink.IsTransportFailure(ex) || ex is InvalidOperationException)
        {
            // The connection is already gone; nothing left to flush.
        }
    }
}
