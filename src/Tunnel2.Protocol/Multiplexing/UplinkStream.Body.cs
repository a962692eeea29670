using System.Buffers;
using System.IO.Pipelines;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>Body pumps between the stream and the HTTP side, under the flow-control windows.</summary>
public sealed partial class UplinkStream
{
    /// <summary>Sends everything <paramref name="source"/> yields as body, then ends the stream's sending side.</summary>
    public async Task SendBodyAsync(PipeReader source, CancellationToken cancellationToken)
    {
        int chunkSize = _uplink.Settings.DataChunkSize;
        while (true)
        {
            ReadResult result = await source.ReadAsync(cancellationToken).ConfigureAwait(false);
            ReadOnlySequence<byte> buffer = result.Buffer;
            while (!buffer.IsEmpty)
            {
                int credit = await AcquireSendCreditAsync((int)Math.Min(buffer.Length, chunkSize), cancellationToken).ConfigureAwait(false);
                byte[] pooled = ArrayPool<byte>.Shared.Rent(credit);
                buffer.Slice(0, credit).CopyTo(pooled);
                SendPooledData(pooled, credit, endStream: false);
                buffer = buffer.Slice(credit);
            }

            source.AdvanceTo(buffer.End);
            if (result.IsCanceled)
            {
                throw new OperationCanceledException("Reading the body to send was cancelled.");
            }

            if (result.IsCompleted)
            {
                break;
            }
        }

        SendEnd();
    }

    /// <summary>Sends everything <paramref name="source"/> yields as body, then ends the stream's sending side.</summary>
    public async Task SendBodyAsync(Stream source, CancellationToken cancellationToken)
    {
        int chunkSize = _uplink.Settings.DataChunkSize;
        while (true)
        {
            int credit = await AcquireSendCreditAsync(chunkSize, cancellationToken).ConfigureAwait(false);
            byte[] pooled = ArrayPool<byte>.Shared.Rent(credit);
            int read;
            try
            {
                read = await source.ReadAsync(pooled.AsMemory(0, credit), cancellationToken).ConfigureAwait(false);
            }
            catch
            {
                ArrayPool<byte>.Shared.Return(pooled);
                throw;
            }

            ReturnSendCredit(credit - read);
            if (read == 0)
            {
                ArrayPool<byte>.Shared.Return(pooled);
                break;
            }

            SendPooledData(pooled, read, endStream: false);
        }

        SendEnd();
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
        PipeReader input = _inbound.Reader;
        ReadResult result = await input.ReadAtLeastAsync(_uplink.Settings.InitialStreamWindow, cancellationToken).ConfigureAwait(false);

        // Examined up to the start: the body's reader gets the same bytes at once instead of waiting for new ones.
        input.AdvanceTo(result.Buffer.Start);
    }

    /// <summary>Copies the peer's body into <paramref name="destination"/>, granting window as it goes.</summary>
    /// <exception cref="StreamResetException">The peer reset the stream mid-body.</exception>
    /// <exception cref="UplinkClosedException">The uplink died mid-body.</exception>
    public async Task CopyInputToAsync(PipeWriter destination, CancellationToken cancellationToken)
    {
        PipeReader input = _inbound.Reader;
        while (true)
        {
            ReadResult result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            ReadOnlySequence<byte> buffer = result.Buffer;
            foreach (ReadOnlyMemory<byte> segment in buffer)
            {
                destination.Write(segment.Span);
            }

            long consumed = buffer.Length;
            input.AdvanceTo(buffer.End);
            if (consumed > 0)
            {
                // Credit goes back only once the destination has taken the bytes (its flush returns when its buffer
                // drains), so a caller who reads slowly holds the window here instead of in ever more socket buffer.
                FlushResult flush = await destination.FlushAsync(cancellationToken).ConfigureAwait(false);
                if (flush.IsCanceled || flush.IsCompleted)
                {
                    throw new OperationCanceledException("The destination stopped accepting the body.");
                }

                OnInputConsumed(consumed);
            }

            if (result.IsCompleted)
            {
                return;
            }
        }
    }

    /// <summary>Copies the peer's body into <paramref name="destination"/>, granting window as it goes.</summary>
    public async Task CopyInputToAsync(Stream destination, CancellationToken cancellationToken)
    {
        PipeReader input = _inbound.Reader;
        while (true)
        {
            ReadResult result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            ReadOnlySequence<byte> buffer = result.Buffer;
            foreach (ReadOnlyMemory<byte> segment in buffer)
            {
                await destination.WriteAsync(segment, cancellationToken).ConfigureAwait(false);
            }

            long consumed = buffer.Length;
            input.AdvanceTo(buffer.End);
            OnInputConsumed(consumed);
            if (result.IsCompleted)
            {
                return;
            }
        }
    }
}
