using System.IO.Pipelines;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Who writes to the output. The loop owns it while it works and lets go only when it finds nothing to send; while it
/// waits, a thread that has just queued the last frame of a step may take it and send on its own thread
/// (<see cref="SendNowOrWake"/>). Such an inline sender never waits: a flush that does not complete at once goes, with
/// the output, to the loop. Once the loop stops it keeps the output for good, so its last flush and the output's
/// completion never overlap anyone's writes.
/// </summary>
internal sealed partial class UplinkFrameWriter
{
    private const int Free = 0;
    private const int Taken = 1;

    /// <summary>Who writes to the output: <see cref="Free"/>, or <see cref="Taken"/> by the loop or an inline sender.</summary>
    private int _owner;

    /// <summary>Whether the loop holds <see cref="_owner"/> (the loop's own field).</summary>
    private bool _loopOwns;

    /// <summary>1 when an inline sender left its pending flush (<see cref="_handedFlush"/>), and the output with it, to the loop.</summary>
    private int _flushHandedOver;

    private ValueTask<FlushResult> _handedFlush;

    /// <summary>
    /// Sends what is queued on the caller's thread when the writer is idle (its loop waits and no batch is forming: at
    /// most <see cref="UplinkSettings.InlineSendMaxStreams"/> streams open), as long as the transport takes the bytes at
    /// once; otherwise wakes the loop. Called by whoever queued the last frame of a step (a request head without body,
    /// the END_STREAM of an answer), so that a small exchange goes out without a hand-off to the writer's loop. A flush
    /// that does not complete at once is handed to the loop, never waited for here. A large payload is copied, never
    /// sent directly (<c>UplinkFrameWriter.Direct.cs</c>).
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

        bool handedOver = false;
        try
        {
            handedOver = SendQueuedInline();
        }
        catch (Exception ex) when (Uplink.IsTransportFailure(ex) || ex is InvalidOperationException)
        {
            _uplink.Close($"transport error while writing: {ex.Message}");
        }
        finally
        {
            if (!handedOver)
            {
                Volatile.Write(ref _owner, Free);
                if (_scheduler.HasQueued || _scheduler.IsCompleted)
                {
                    _scheduler.Wake(); // frames queued while this thread wrote, whose senders found the writer taken
                }
            }
        }
    }

    /// <summary>The inline sender's write and flush (it owns the output).</summary>
    /// <returns>True when the flush is pending and the output now the loop's.</returns>
    private bool SendQueuedInline()
    {
        int frames = 0;
        int unflushed = WriteQueued(0, ref frames, direct: false);
        if (unflushed == 0)
        {
            return false;
        }

        UplinkMetrics.Sent(frames, unflushed);
        ValueTask<FlushResult> flush = _output.FlushAsync();
        if (!flush.IsCompleted)
        {
            _handedFlush = flush;
            Volatile.Write(ref _flushHandedOver, 1); // the output stays taken: the loop owns it from here
            _scheduler.Wake();
            return true;
        }

        OnFlushed(flush.GetAwaiter().GetResult());
        return false;
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

            _loopOwns = true;
            return !handedOver || await FinishFlushAsync(_handedFlush).ConfigureAwait(false);
        }
    }

    /// <summary>The loop found nothing to send: an inline sender may write until the loop takes the output back.</summary>
    private void LetGoOfOutput()
    {
        _loopOwns = false;
        Volatile.Write(ref _owner, Free);
    }

    /// <summary>
    /// The loop stops (the output is completed next): takes the output if it does not hold it (a failure while it waited),
    /// finishing an inline sender's handed-over flush; never lets go again, so no inline sender starts after this.
    /// </summary>
    private async ValueTask TakeOutputForGoodAsync()
    {
        if (_loopOwns)
        {
            return;
        }

        TakeOverFromInlineSender(out bool handedOver);
        _loopOwns = true;
        if (handedOver)
        {
            try
            {
                await _handedFlush.ConfigureAwait(false);
            }
            catch (Exception ex) when (Uplink.IsTransportFailure(ex) || ex is InvalidOperationException)
            {
                // The transport failed: the completion that follows reports it.
            }
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
}
