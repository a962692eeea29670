using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>Reads the backend's response body in its framing and sends it up the stream under the flow-control window.</summary>
internal static class ResponseBodyPump
{
    private const int MaxChunkLineBytes = 4096;

    public static async Task SendAsync(UplinkStream stream, PipeReader input, BackendResponseHead head, CancellationToken cancellationToken)
    {
        switch (head.Framing)
        {
            case BodyFraming.ContentLength:
                await SendFixedAsync(stream, input, head.ContentLength, cancellationToken);
                break;
            case BodyFraming.Chunked:
                await SendChunkedAsync(stream, input, cancellationToken);
                break;
            case BodyFraming.UntilClose:
                await SendUntilCloseAsync(stream, input, cancellationToken);
                break;
        }

        stream.SendEnd();
    }

    private static async Task SendFixedAsync(UplinkStream stream, PipeReader input, long remaining, CancellationToken cancellationToken)
    {
        while (remaining > 0)
        {
            ReadResult result = await input.ReadAsync(cancellationToken);
            ReadOnlySequence<byte> buffer = result.Buffer;
            if (buffer.IsEmpty && result.IsCompleted)
            {
                throw new IOException($"The backend closed the connection {remaining} bytes before the end of the body.");
            }

            ReadOnlySequence<byte> take = buffer.Slice(0, Math.Min(buffer.Length, remaining));
            await SendSequenceAsync(stream, take, cancellationToken);
            remaining -= take.Length;
            input.AdvanceTo(take.End);
        }
    }

    private static async Task SendUntilCloseAsync(UplinkStream stream, PipeReader input, CancellationToken cancellationToken)
    {
        while (true)
        {
            ReadResult result = await input.ReadAsync(cancellationToken);
            await SendSequenceAsync(stream, result.Buffer, cancellationToken);
            input.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                return;
            }
        }
    }

    private static async Task SendChunkedAsync(UplinkStream stream, PipeReader input, CancellationToken cancellationToken)
    {
        long chunkRemaining = 0;
        bool expectChunkEnd = false;
        bool inTrailers = false;
        while (true)
        {
            ReadResult result = await input.ReadAsync(cancellationToken);
            ReadOnlySequence<byte> buffer = result.Buffer;
            while (true)
            {
                if (chunkRemaining > 0)
                {
                    if (buffer.IsEmpty)
                    {
                        break;
                    }

                    ReadOnlySequence<byte> data = buffer.Slice(0, Math.Min(buffer.Length, chunkRemaining));
                    await SendSequenceAsync(stream, data, cancellationToken);
                    chunkRemaining -= data.Length;
                    buffer = buffer.Slice(data.End);
                    expectChunkEnd = chunkRemaining == 0;
                    continue;
                }

                SequencePosition? newline = buffer.PositionOf((byte)'\n');
                if (newline is null)
                {
                    if (buffer.Length > MaxChunkLineBytes)
                    {
                        throw new InvalidDataException("Chunk size line too long.");
                    }

                    break;
                }

                string line = Encoding.Latin1.GetString(buffer.Slice(0, newline.Value)).TrimEnd('\r');
                buffer = buffer.Slice(buffer.GetPosition(1, newline.Value));
                if (expectChunkEnd)
                {
                    if (line.Length != 0)
                    {
                        throw new InvalidDataException("Missing CRLF after a chunk.");
                    }

                    expectChunkEnd = false;
                    continue;
                }

                if (inTrailers)
                {
                    if (line.Length == 0)
                    {
                        input.AdvanceTo(buffer.Start);
                        return; // trailers are dropped: the tunnel does not carry them
                    }

                    continue;
                }

                int extension = line.IndexOf(';', StringComparison.Ordinal);
                string size = (extension < 0 ? line : line[..extension]).Trim();
                if (!long.TryParse(size, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out chunkRemaining) || chunkRemaining < 0)
                {
                    throw new InvalidDataException($"Invalid chunk size '{size}'.");
                }

                inTrailers = chunkRemaining == 0;
            }

            input.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted)
            {
                throw new IOException("The backend closed the connection inside a chunked body.");
            }
        }
    }

    private static async ValueTask SendSequenceAsync(UplinkStream stream, ReadOnlySequence<byte> data, CancellationToken cancellationToken)
    {
        int chunkSize = stream.Uplink.Settings.DataChunkSize;
        while (!data.IsEmpty)
        {
            int credit = await stream.AcquireSendCreditAsync((int)Math.Min(data.Length, chunkSize), cancellationToken);
            byte[] pooled = ArrayPool<byte>.Shared.Rent(credit);
            data.Slice(0, credit).CopyTo(pooled);
            stream.SendPooledData(pooled, credit, endStream: false);
            data = data.Slice(credit);
        }
    }
}
