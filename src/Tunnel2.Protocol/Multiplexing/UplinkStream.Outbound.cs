using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using Tunnel2.Protocol.Buffers;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// This side's bytes: the body layer that cuts them into Data frames under the peer's credit, and the stream's own
/// queue of frames for the uplink's writer.
/// </summary>
internal sealed partial class UplinkStream
{
    // The stream's own queue of frames for the uplink's writer: its data frames, in order, and the END_STREAM and Reset
    // that must follow them. The FrameScheduler takes one frame at a time from the streams it has lined up,
    // so one stream's backlog never sits in front of another stream's frames.

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

    // The one body layer both ends use, under the flow-control windows. Going out: SendAsync cuts bytes in
    // hand into Data frames, SendFrameAsync fills one frame from a source only once there is credit
    // for it, and SendBodyAsync sends a whole pipe; the end of the body rides on the last Data frame where it
    // is known by then. Coming in: CopyInputToAsync is the one copy loop, plain or in HTTP/1.1 chunks.
    // Each holds the stream while it runs (UplinkStream.State.cs): a loop its owner stopped waiting for still
    // keeps the stream from serving another exchange.

    /// <summary>
    /// Sends <paramref name="data"/> as Data frames, each as large as credit and <see cref="UplinkSettings.DataChunkSize"/>
    /// allow. With <paramref name="endStream"/>, the last frame carries END_STREAM (an empty one when there is no data).
    /// </summary>
    public async ValueTask SendAsync(ReadOnlySequence<byte> data, bool endStream, CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            await SendHeldAsync(data, endStream, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            Release();
        }
    }

    /// <summary><see cref="SendAsync"/> for a caller that already holds the stream.</summary>
    private async ValueTask SendHeldAsync(ReadOnlySequence<byte> data, bool endStream, CancellationToken cancellationToken)
    {
        int chunkSize = _uplink.Settings.DataChunkSize;
        while (!data.IsEmpty)
        {
            int credit = await AcquireSendCreditAsync((int)Math.Min(data.Length, chunkSize), cancellationToken).ConfigureAwait(false);
            byte[] pooled = DataBufferPool.Shared.Rent(credit);
            data.Slice(0, credit).CopyTo(pooled);
            data = data.Slice(credit);
            SendPooledData(pooled, credit, endStream && data.IsEmpty);
            if (endStream && data.IsEmpty)
            {
                return;
            }
        }

        if (endStream)
        {
            SendEnd();
        }
    }

    /// <summary>
    /// Waits for credit, then has <paramref name="fill"/> read at most that many bytes (and at most
    /// <paramref name="limit"/>) straight into the frame's buffer, and sends them: a source is read only as fast as the
    /// peer takes the body, so a caller who does not read leaves the rest where it came from. Credit not filled goes back.
    /// </summary>
    /// <param name="fill">Reads into the buffer it is given; 0 means the source has ended.</param>
    /// <param name="waitForData">
    /// Completes once <paramref name="fill"/> would return at once. Called before the frame waits its turn in the uplink's
    /// <see cref="QueuedDataBudget"/>, so a turn is never spent on a read that then waits for its source.
    /// </param>
    /// <param name="endAtLimit">When the frame reaches <paramref name="limit"/>, it carries END_STREAM.</param>
    /// <returns>How many bytes went out; 0 when the source had ended (nothing was sent).</returns>
    public async ValueTask<int> SendFrameAsync<TState>(
        Func<Memory<byte>, TState, CancellationToken, ValueTask<int>> fill,
        Func<TState, CancellationToken, ValueTask> waitForData,
        TState state,
        long limit,
        bool endAtLimit,
        CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            if (!HasSendCredit)
            {
                SendWaitingHead();
            }

            int credit = await AcquireSendCreditAsync((int)Math.Min(limit, _uplink.Settings.DataChunkSize), cancellationToken).ConfigureAwait(false);

            // A whole small answer (its last frame, within one initial window) is not held back: it never waits behind bulk.
            bool budgeted = !(endAtLimit && limit <= _uplink.Settings.InitialStreamWindow);
            QueuedDataBudget budget = _uplink.Scheduler.DataBudget;
            if (budgeted && !budget.TryReserveNow(credit))
            {
                SendWaitingHead();
                await ReserveWhenDataWaitsAsync(waitForData, state, budget, credit, cancellationToken).ConfigureAwait(false);
            }

            byte[] pooled = DataBufferPool.Shared.Rent(credit);
            int length;
            try
            {
                length = await StartFill(fill, pooled.AsMemory(0, credit), state, cancellationToken).ConfigureAwait(false);
            }
            catch
            {
                DataBufferPool.Shared.Return(pooled);
                GiveBack(credit, budgeted ? budget : null);
                throw;
            }

            GiveBack(credit - length, budgeted ? budget : null);

            if (length == 0)
            {
                DataBufferPool.Shared.Return(pooled);
                return 0;
            }

            SendPooledData(pooled, length, endStream: endAtLimit && length == limit, holdsQueuedDataBudget: budgeted);
            return length;
        }
        finally
        {
            Release();
        }
    }

    /// <summary>The most frames <see cref="TrySendFramesNow{TState}"/> fills from one read.</summary>
    private const int MaxFramesPerRead = 4;

    /// <inheritdoc cref="IStreamHandle.TrySendFramesNow{TState}"/>
    public SendNowStatus TrySendFramesNow<TState>(ScatterFill<TState> fill, TState state, long limit, bool endAtLimit, int maxFrames, out int sent)
    {
        sent = 0;
        int chunk = _uplink.Settings.DataChunkSize;
        int credit = _sendWindow.TryAcquire((int)Math.Min(limit, (long)chunk * Math.Clamp(maxFrames, 1, MaxFramesPerRead)));
        if (credit == 0)
        {
            SendWaitingHead();
            return SendNowStatus.NoCredit;
        }

        // As SendFrameAsync: a whole small answer is not held back, anything else takes its room in the budget.
        bool budgeted = !(endAtLimit && limit <= _uplink.Settings.InitialStreamWindow);
        QueuedDataBudget budget = _uplink.Scheduler.DataBudget;
        if (budgeted && !budget.TryReserveNow(credit))
        {
            ReturnSendCredit(credit);
            SendWaitingHead();
            return SendNowStatus.NoBudget;
        }

        Hold();
        try
        {
            return FillAndQueue(fill, state, credit, limit, endAtLimit, budgeted ? budget : null, out sent);
        }
        finally
        {
            Release();
        }
    }

    /// <summary>Under credit (and budget) for <paramref name="credit"/> bytes: one read into pooled frame buffers, queued as frames.</summary>
    private SendNowStatus FillAndQueue<TState>(ScatterFill<TState> fill, TState state, int credit, long limit, bool endAtLimit, QueuedDataBudget? budget, out int sent)
    {
        int chunk = _uplink.Settings.DataChunkSize;
        var arrays = new FrameArrays();
        var buffers = new FrameMemories();
        int count = 0;
        for (int left = credit; left > 0; left -= chunk)
        {
            int size = Math.Min(left, chunk);
            arrays[count] = DataBufferPool.Shared.Rent(size);
            buffers[count] = arrays[count].AsMemory(0, size);
            count++;
        }

        int read;
        try
        {
            read = fill(((ReadOnlySpan<Memory<byte>>)buffers)[..count], state);
        }
        catch
        {
            ReturnArrays(arrays, 0, count);
            GiveBack(credit, budget);
            throw;
        }

        sent = Math.Max(read, 0);
        GiveBack(credit - sent, budget);
        if (read <= 0)
        {
            ReturnArrays(arrays, 0, count);
            SendWaitingHead();
            return read == 0 ? SendNowStatus.Ended : SendNowStatus.WouldBlock;
        }

        QueueFrames(arrays, count, read, chunk, endAtLimit && read == limit, budget);
        return SendNowStatus.Sent;
    }

    /// <summary>Queues <paramref name="read"/> bytes held in <paramref name="arrays"/> as frames of up to <paramref name="chunk"/>; gives back what is not sent.</summary>
    private void QueueFrames(in FrameArrays arrays, int count, int read, int chunk, bool endStream, QueuedDataBudget? budget)
    {
        int queued = 0;
        int next = 0;
        try
        {
            while (queued < read)
            {
                int length = Math.Min(chunk, read - queued);
                queued += length;
                byte[] payload = arrays[next++];
                SendPooledData(payload, length, endStream && queued == read, holdsQueuedDataBudget: budget is not null);
            }
        }
        catch
        {
            budget?.Release(read - queued); // the frame that threw gave its own back
            throw;
        }
        finally
        {
            ReturnArrays(arrays, next, count); // the buffers no byte was read into, or that were not queued
        }
    }

    private static void ReturnArrays(in FrameArrays arrays, int from, int count)
    {
        for (int i = from; i < count; i++)
        {
            DataBufferPool.Shared.Return(arrays[i]);
        }
    }

    [InlineArray(MaxFramesPerRead)]
    private struct FrameArrays
    {
        private byte[] _first;
    }

    [InlineArray(MaxFramesPerRead)]
    private struct FrameMemories
    {
        private Memory<byte> _first;
    }

    /// <summary>Starts a frame's read from its source; when that has to wait, a head held for this body goes first.</summary>
    private ValueTask<int> StartFill<TState>(Func<Memory<byte>, TState, CancellationToken, ValueTask<int>> fill, Memory<byte> buffer, TState state, CancellationToken cancellationToken)
    {
        ValueTask<int> filling = fill(buffer, state, cancellationToken);
        if (!filling.IsCompleted)
        {
            SendWaitingHead();
        }

        return filling;
    }

    /// <summary>The slow path of a frame's turn: once its source has data, waits for room in the uplink's queued-data budget.</summary>
    private async ValueTask ReserveWhenDataWaitsAsync<TState>(
        Func<TState, CancellationToken, ValueTask> waitForData, TState state, QueuedDataBudget budget, int credit, CancellationToken cancellationToken)
    {
        try
        {
            await waitForData(state, cancellationToken).ConfigureAwait(false);
            await budget.ReserveAsync(credit, light: SentBytes < FrameScheduler.LightStreamBytes, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            ReturnSendCredit(credit);
            throw;
        }
    }

    /// <summary>Returns credit a frame took and did not fill, and its room in the budget when it held some.</summary>
    private void GiveBack(int bytes, QueuedDataBudget? budget)
    {
        ReturnSendCredit(bytes);
        budget?.Release(bytes);
    }

    /// <summary>Sends everything <paramref name="source"/> yields as body, then ends the stream's sending side.</summary>
    public async Task SendBodyAsync(PipeReader source, CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            while (true)
            {
                ReadResult result = await source.ReadAsync(cancellationToken).ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    source.AdvanceTo(result.Buffer.Start);
                    throw new OperationCanceledException("Reading the body to send was cancelled.");
                }

                try
                {
                    await SendHeldAsync(result.Buffer, endStream: result.IsCompleted, cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    source.AdvanceTo(result.Buffer.End);
                }

                if (result.IsCompleted)
                {
                    return;
                }
            }
        }
        finally
        {
            Release();
        }
    }

    /// <summary>
    /// Sends everything <paramref name="source"/> yields as Data frames, each read straight into the frame's buffer under
    /// credit in hand, then ends this side's sending half (a half-close: the peer may still send).
    /// </summary>
    /// <exception cref="StreamResetException">The stream was reset meanwhile.</exception>
    /// <exception cref="UplinkClosedException">The uplink died meanwhile.</exception>
    public async Task SendStreamAsync(Stream source, CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            int want = IByteStream.WaitingReadSize;
            while (true)
            {
                int credit = await AcquireSendCreditAsync(want, cancellationToken).ConfigureAwait(false);
                byte[] pooled = DataBufferPool.Shared.Rent(credit);
                int length;
                try
                {
                    length = await source.ReadAsync(pooled.AsMemory(0, credit), cancellationToken).ConfigureAwait(false);
                }
                catch
                {
                    DataBufferPool.Shared.Return(pooled);
                    ReturnSendCredit(credit);
                    throw;
                }

                ReturnSendCredit(credit - length);
                if (length == 0)
                {
                    DataBufferPool.Shared.Return(pooled);
                    SendEnd();
                    return;
                }

                SendPooledData(pooled, length, endStream: false);
                want = length == credit ? _uplink.Settings.DataChunkSize : IByteStream.WaitingReadSize;
            }
        }
        finally
        {
            Release();
        }
    }

    // For an owner on an event loop, which cannot wait on tasks: credit taken without waiting, a listener told when more
    // comes, pooled buffers handed to the writer as Data frames.

    /// <summary>Takes up to <paramref name="max"/> bytes of send credit without waiting; 0 when there is none.</summary>
    public int TryTakeSendCredit(int max) => _sendWindow.TryAcquire(max);

    /// <summary>Tells <paramref name="listener"/> once when send credit is there again (at once if it is), or the stream failed.</summary>
    public void NotifyOnSendCredit(ISendCreditListener listener) => _sendWindow.NotifyOnCredit(listener);

    /// <summary>Gives back credit taken with <see cref="TryTakeSendCredit"/> and not sent.</summary>
    public void ReturnUnusedSendCredit(int unused) => ReturnSendCredit(unused);

    /// <summary>
    /// Sends <paramref name="length"/> bytes of <paramref name="pooled"/> (rented from the shared pool; the stream owns it
    /// now) as one Data frame, under credit taken with <see cref="TryTakeSendCredit"/>. Queues it for the writer; never
    /// writes on this thread.
    /// </summary>
    /// <exception cref="StreamResetException">The stream was reset meanwhile.</exception>
    /// <exception cref="UplinkClosedException">The uplink no longer sends.</exception>
    public void SendPooled(byte[] pooled, int length) => SendPooledData(pooled, length, endStream: false);
}
