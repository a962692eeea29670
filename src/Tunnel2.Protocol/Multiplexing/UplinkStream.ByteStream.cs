using System.Buffers;
using System.IO.Pipelines;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The body layer for a raw byte stream on the other side (an upgraded connection: a WebSocket, or any protocol named
/// in <c>Upgrade</c>), with no pipe of its own in between: <see cref="SendStreamAsync"/> reads the source straight into
/// each Data frame's buffer, and <see cref="CopyInputToAsync(Stream, CancellationToken)"/> writes the inbound buffer's
/// own memory to the destination. Flow control is the same as for bodies: a read only with credit in hand, credit back
/// only once the destination has taken the bytes.
/// </summary>
public sealed partial class UplinkStream
{
    /// <summary>
    /// What a read that may wait for its source asks for: what a quiet direction holds while it waits, as the 16 KiB pipe
    /// buffer it replaces did. A read that fills its buffer is followed by one as large as credit and
    /// <see cref="UplinkSettings.DataChunkSize"/> allow, so a bulk transfer still moves in large frames.
    /// </summary>
    public const int WaitingReadSize = 16 * 1024;

    /// <summary>The largest write of inbound bytes that came in several pieces (one send each).</summary>
    private const int CoalescedWriteLimit = 64 * 1024;

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
            int want = WaitingReadSize;
            while (true)
            {
                int credit = await AcquireSendCreditAsync(want, cancellationToken).ConfigureAwait(false);
                byte[] pooled = ArrayPool<byte>.Shared.Rent(credit);
                int length;
                try
                {
                    length = await source.ReadAsync(pooled.AsMemory(0, credit), cancellationToken).ConfigureAwait(false);
                }
                catch
                {
                    ArrayPool<byte>.Shared.Return(pooled);
                    ReturnSendCredit(credit);
                    throw;
                }

                ReturnSendCredit(credit - length);
                if (length == 0)
                {
                    ArrayPool<byte>.Shared.Return(pooled);
                    SendEnd();
                    return;
                }

                SendPooledData(pooled, length, endStream: false);
                want = length == credit ? _uplink.Settings.DataChunkSize : WaitingReadSize;
            }
        }
        finally
        {
            Release();
        }
    }

    /// <summary>
    /// Writes the peer's bytes to <paramref name="destination"/> as they come, from the inbound buffer itself, until the
    /// peer ends its side. Credit goes back once each write has returned (the destination took the bytes).
    /// </summary>
    /// <exception cref="StreamResetException">The peer reset the stream.</exception>
    /// <exception cref="UplinkClosedException">The uplink died.</exception>
    /// <exception cref="IOException">The destination stopped taking the bytes.</exception>
    public Task CopyInputToAsync(Stream destination, CancellationToken cancellationToken) =>
        CopyInputAsync(new StreamDestination(destination), cancellationToken);

    /// <summary>
    /// The loop both byte-stream destinations share: the inbound buffer's own memory handed to the destination, the
    /// credit given back once the destination took it, until the peer ends its side.
    /// </summary>
    private async Task CopyInputAsync<TDestination>(TDestination destination, CancellationToken cancellationToken)
        where TDestination : IInboundDestination
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
                try
                {
                    await destination.WriteAsync(buffer, cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    input.AdvanceTo(buffer.End);
                }

                OnInputConsumed(consumed);
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

    /// <summary>Where <see cref="CopyInputAsync{TDestination}"/> writes (a struct per kind, so the loop is not shared through a delegate).</summary>
    private interface IInboundDestination
    {
        ValueTask WriteAsync(ReadOnlySequence<byte> buffer, CancellationToken cancellationToken);
    }

    private readonly struct StreamDestination(Stream stream) : IInboundDestination
    {
        public ValueTask WriteAsync(ReadOnlySequence<byte> buffer, CancellationToken cancellationToken) =>
            UplinkStream.WriteAsync(stream, buffer, cancellationToken);
    }

    /// <summary>
    /// One write for a buffer in one piece; a buffer in several pieces (the inbound buffer's are 4 KiB) goes out joined
    /// into writes of up to 64 KiB, since each write to a socket is a send of its own.
    /// </summary>
    private static async ValueTask WriteAsync(Stream destination, ReadOnlySequence<byte> buffer, CancellationToken cancellationToken)
    {
        if (buffer.IsSingleSegment)
        {
            if (!buffer.IsEmpty)
            {
                await destination.WriteAsync(buffer.First, cancellationToken).ConfigureAwait(false);
            }

            return;
        }

        byte[] joined = ArrayPool<byte>.Shared.Rent((int)Math.Min(buffer.Length, CoalescedWriteLimit));
        try
        {
            while (!buffer.IsEmpty)
            {
                int length = (int)Math.Min(buffer.Length, joined.Length);
                buffer.Slice(0, length).CopyTo(joined);
                await destination.WriteAsync(joined.AsMemory(0, length), cancellationToken).ConfigureAwait(false);
                buffer = buffer.Slice(length);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(joined);
        }
    }
}
