using System.IO.Pipelines;
using System.Runtime.CompilerServices;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink's one writer: takes frames in the order the <see cref="FrameScheduler"/> picks, coalesces them into few
/// transport writes, and on the way out gives the last buffered bytes one bounded flush. One owner writes at a time
/// (<c>UplinkFrameWriter.Ownership.cs</c>): the loop, or, when the loop is idle, a thread that has just queued the last
/// frame of a step (<see cref="SendNowOrWake"/>). A large Data payload goes straight from its pooled buffer to the
/// connection, right after the batch that ends with its header; only the loop does that (<c>UplinkFrameWriter.Direct.cs</c>).
/// </summary>
internal sealed partial class UplinkFrameWriter : IUplinkWriter
{
    /// <summary>Flush the transport at least every this many bytes while frames keep coming.</summary>
    private const int MaxUnflushedBytes = 64 * 1024;

    /// <summary>How long the last flush may wait for a peer that does not read (e.g. frozen, buffers full).</summary>
    private static readonly TimeSpan FinalFlushTimeout = TimeSpan.FromMilliseconds(500);

    private readonly PipeWriter _output;
    private readonly FrameScheduler _scheduler;
    private readonly Uplink _uplink;
    private long _lastSentTicks = Environment.TickCount64;

    /// <param name="connection">The stream under <paramref name="output"/> (large payloads go to it directly), or null.</param>
    public UplinkFrameWriter(PipeWriter output, Stream? connection, FrameScheduler scheduler, Uplink uplink)
    {
        _output = output;
        _connection = connection;
        _scheduler = scheduler;
        _uplink = uplink;
    }

    /// <summary>When the writer last handed bytes to the transport (<see cref="Environment.TickCount64"/>).</summary>
    public long LastSentTicks => Volatile.Read(ref _lastSentTicks);

    /// <summary>Writes until the scheduler is completed and empty, or the transport fails (which closes the uplink).</summary>
    public async Task RunAsync()
    {
        try
        {
            while (true)
            {
                if (!_loopOwns && !await TakeOutputAsync().ConfigureAwait(false))
                {
                    return;
                }

                // Read before taking frames: once completion is seen, every frame queued before it is visible too.
                bool completed = _scheduler.IsCompleted;
                (int unflushed, int frames) = await WriteBatchAsync().ConfigureAwait(false);
                if (unflushed == 0)
                {
                    if (completed)
                    {
                        return; // still owned: no inline sender starts after this
                    }

                    LetGoOfOutput();
                    await _scheduler.WaitAsync().ConfigureAwait(false);
                    continue;
                }

                UplinkMetrics.Sent(frames, unflushed);
                if (!await FinishFlushAsync(_output.FlushAsync()).ConfigureAwait(false))
                {
                    return;
                }

                if (_hasDirect)
                {
                    await WriteDirectAsync().ConfigureAwait(false);
                }
            }
        }
        catch (Exception ex) when (Uplink.IsTransportFailure(ex) || ex is InvalidOperationException)
        {
            _uplink.Close($"transport error while writing: {ex.Message}");
        }
        finally
        {
            ReturnDirect();
            await TakeOutputForGoodAsync().ConfigureAwait(false);
            _scheduler.DropQueued();
            await CompleteOutputAsync().ConfigureAwait(false);
        }
    }

    /// <summary>The loop's batch: what is queued now, and, while that is under 64 KiB, what comes within one thread-pool turn.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))] // once per batch: its yield allocates no box
    private async ValueTask<(int Unflushed, int Frames)> WriteBatchAsync()
    {
        int frames = 0;
        int unflushed = WriteQueued(0, ref frames, direct: true);
        if (unflushed > 0 && unflushed < MaxUnflushedBytes && !_hasDirect)
        {
            // A batch under 64 KiB waits one thread-pool turn for frames that other threads are about to queue, then
            // goes out in one send: fewer syscalls and less CPU per request at a fixed rate
            // (docs/benchmarks/2026-11-24-uplink-v2.md); under Kestrel's upgrade its I/O queue had merged flushes this way.
            await Task.Yield();
            unflushed = WriteQueued(unflushed, ref frames, direct: true);
        }

        return (unflushed, frames);
    }

    /// <summary>
    /// Takes frames in the scheduler's order and writes them into the output until the batch reaches
    /// <see cref="MaxUnflushedBytes"/> or none is left. With <paramref name="direct"/> (the loop only), it stops after the
    /// header of a large payload, which then waits in <see cref="_direct"/> for the batch to be flushed; without, such a
    /// payload is copied like any other.
    /// </summary>
    /// <returns>The batch's unflushed bytes (a direct payload's included), starting from <paramref name="unflushed"/>.</returns>
    private int WriteQueued(int unflushed, ref int frames, bool direct)
    {
        while (unflushed < MaxUnflushedBytes && _scheduler.TryDequeue(out OutboundFrame frame))
        {
            unflushed += frame.TotalLength;
            frames++;
            if (direct && TryKeepDirect(frame))
            {
                break;
            }

            frame.WriteTo(_output);
        }

        return unflushed;
    }

    /// <returns>False when the transport no longer takes writes (the uplink has been closed).</returns>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))] // once per batch: a flush that waits allocates no box
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
