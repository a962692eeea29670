using System.Buffers;
using System.IO.Pipelines;
using Tunnel2.Protocol.Buffers;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The one body layer both ends use, under the flow-control windows. Going out: <see cref="SendAsync"/> cuts bytes in
/// hand into Data frames, <see cref="SendFrameAsync{TState}"/> fills one frame from a source only once there is credit
/// for it, and <see cref="SendBodyAsync"/> sends a whole pipe; the end of the body rides on the last Data frame where it
/// is known by then. Coming in: <see cref="CopyInputToAsync(PipeWriter, bool, CancellationToken)"/> is the one copy loop, plain or in HTTP/1.1 chunks.
/// Each holds the stream while it runs (<c>UplinkStream.Lifetime.cs</c>): a loop its owner stopped waiting for still
/// keeps the stream from serving another exchange.
/// </summary>
public sealed partial class UplinkStream
{
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
    /// Completes once the peer has sent its whole body, or as much of it as the stream's initial window lets it send
    /// before this side reads. A relay waits for this before it takes a backend slot, so a body that trickles in
    /// holds no slot while it trickles (nginx reads the whole body first for the same reason). Nothing is consumed.
    /// </summary>
    /// <exception cref="StreamResetException">The peer reset the stream before that.</exception>
    /// <exception cref="UplinkClosedException">The uplink died before that.</exception>
    public async ValueTask WaitForBodyOrFullWindowAsync(CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            PipeReader input = _inbound.Reader;
            ReadResult result = await input.ReadAtLeastAsync(_uplink.Settings.InitialStreamWindow, cancellationToken).ConfigureAwait(false);

            // Examined up to the start: the body's reader gets the same bytes at once instead of waiting for new ones.
            input.AdvanceTo(result.Buffer.Start);
        }
        finally
        {
            Release();
        }
    }

    /// <summary>
    /// Completes once the peer has sent a byte on the stream or ended its side. Nothing is consumed: the next read gets
    /// the same bytes at once. The server's TCP port waits for this to learn that a client's target took a connection.
    /// </summary>
    /// <exception cref="StreamResetException">The peer reset the stream before that.</exception>
    /// <exception cref="UplinkClosedException">The uplink died before that.</exception>
    public async ValueTask WaitForInputAsync(CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            PipeReader input = _inbound.Reader;
            ReadResult result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            input.AdvanceTo(result.Buffer.Start);
        }
        finally
        {
            Release();
        }
    }

    /// <summary>
    /// Copies the peer's body into <paramref name="destination"/>, as it is or (with <paramref name="chunked"/>) in
    /// HTTP/1.1 chunked framing, one chunk per read. Credit goes back only once the destination has taken the bytes (its
    /// flush returns when its buffer drains), so a reader who is slow holds the window here instead of in ever more
    /// socket buffer. The destination is flushed at the end, not completed.
    /// </summary>
    /// <exception cref="StreamResetException">The peer reset the stream mid-body.</exception>
    /// <exception cref="UplinkClosedException">The uplink died mid-body.</exception>
    /// <exception cref="IOException">The destination stopped taking the body.</exception>
    public Task CopyInputToAsync(PipeWriter destination, bool chunked, CancellationToken cancellationToken) =>
        CopyInputToAsync(destination, chunked, tap: null, cancellationToken);

    /// <inheritdoc cref="CopyInputToAsync(PipeWriter, bool, CancellationToken)"/>
    /// <param name="tap">Sees every byte of the body as it is copied, when not null.</param>
    public async Task CopyInputToAsync(PipeWriter destination, bool chunked, IBodyTap? tap, CancellationToken cancellationToken)
    {
        Hold();
        try
        {
            PipeReader input = _inbound.Reader;
            while (true)
            {
                ReadResult result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
                ReadOnlySequence<byte> buffer = result.Buffer;
                long consumed = buffer.Length;
                if (consumed > 0)
                {
                    if (chunked)
                    {
                        ChunkedEncoding.WriteChunkStart(destination, consumed);
                    }

                    foreach (ReadOnlyMemory<byte> segment in buffer)
                    {
                        destination.Write(segment.Span);
                        tap?.Observe(segment.Span);
                    }

                    if (chunked)
                    {
                        ChunkedEncoding.WriteChunkEnd(destination);
                    }
                }

                input.AdvanceTo(buffer.End);
                bool lastChunk = result.IsCompleted && chunked;
                if (lastChunk)
                {
                    ChunkedEncoding.WriteLastChunk(destination);
                }

                if (consumed > 0 || lastChunk)
                {
                    FlushResult flush = await destination.FlushAsync(cancellationToken).ConfigureAwait(false);
                    if (flush.IsCanceled || flush.IsCompleted)
                    {
                        throw new IOException("The destination stopped taking the body.");
                    }

                    OnInputConsumed(consumed);
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
}
