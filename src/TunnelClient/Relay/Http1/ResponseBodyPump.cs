using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Relay.OnLoop;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>
/// Reads the backend's response body in its framing and sends it up the stream under the flow-control window. A body of
/// known length, or one that runs until the backend closes, is read only once the window allows: straight from the
/// socket into the frame's buffer (after what the head's read left in the pipe), at most as many bytes as the credit in
/// hand, so a caller who does not read leaves the rest of the body in the backend's socket, not in this process. On the
/// client's event loop such a body is read up to four frames at a time (<see cref="LoopBodyReads"/>).
/// </summary>
internal static class ResponseBodyPump
{
    private const int MaxChunkLineBytes = 4096;

    /// <summary>A body longer than this may take a while to a slow caller.</summary>
    private const long LongBodyBytes = 64 * 1024;

    /// <summary>
    /// Whether the body may keep the connection busy for long (known length over 64 KiB, or until the backend closes).
    /// Chunked bodies count as short: many small dynamic answers are chunked.
    /// </summary>
    public static bool MayTakeLong(BackendResponseHead head) =>
        head.Framing == BodyFraming.UntilClose || (head.Framing == BodyFraming.ContentLength && head.ContentLength > LongBodyBytes);

    /// <param name="input">The connection's reader, holding whatever the head's read took in past the head.</param>
    /// <param name="source">The byte stream under <paramref name="input"/>, read directly once the pipe has nothing buffered.</param>
    /// <param name="tap">Sees the body's bytes (without chunk framing) as they go up, when not null.</param>
    public static async Task SendAsync(IHttpExchange stream, PipeReader input, Stream source, BackendResponseHead head, IBodyTap? tap, CancellationToken cancellationToken)
    {
        switch (head.Framing)
        {
            case BodyFraming.ContentLength:
                await SendFixedAsync(stream, input, source, head.ContentLength, tap, cancellationToken);
                return; // the last data frame carried END_STREAM
            case BodyFraming.Chunked:
                await SendChunkedAsync(stream, input, tap, cancellationToken);
                break;
            case BodyFraming.UntilClose:
                while (await SendFrameAsync(stream, input, source, int.MaxValue, lastFrameOfBody: false, tap, cancellationToken) > 0)
                {
                }

                break;
        }

        stream.SendEnd();
    }

    private static async Task SendFixedAsync(IHttpExchange stream, PipeReader input, Stream source, long remaining, IBodyTap? tap, CancellationToken cancellationToken)
    {
        while (remaining > 0)
        {
            int sent = await SendFrameAsync(stream, input, source, remaining, lastFrameOfBody: true, tap, cancellationToken);
            if (sent == 0)
            {
                throw new IOException($"The backend closed the connection {remaining} bytes before the end of the body.");
            }

            remaining -= sent;
        }
    }

    /// <summary>
    /// One Data frame of at most <paramref name="limit"/> bytes, read from the backend only once there is credit for it
    /// (<see cref="IStreamHandle.SendFrameAsync{TState}"/>); returns how many it sent, 0 at the end of the connection.
    /// </summary>
    /// <param name="lastFrameOfBody">When the frame reaches <paramref name="limit"/>, it ends the stream (END_STREAM on the data, no extra frame).</param>
    private static async ValueTask<int> SendFrameAsync(IHttpExchange stream, PipeReader input, Stream source, long limit, bool lastFrameOfBody, IBodyTap? tap, CancellationToken cancellationToken)
    {
        if (tap is null && source is LoopSocketStream onLoop && !HoldsBufferedBytes(input))
        {
            // On the client's loop: 1 MiB reads into four frames, credit waited for on the loop (LoopBodyReads).
            int sent = await LoopBodyReads.SendAsync(stream, onLoop, limit, lastFrameOfBody, cancellationToken);
            if (sent >= 0)
            {
                return sent;
            }
        }

        if (!stream.HasSendCredit && !HoldsBufferedBytes(input))
        {
            // The socket's cached read arguments keep a reference to the buffer of its last read, long after that
            // buffer went back to the pool (and, under a crowd, out of it): a stream that now waits for its caller
            // would keep a dead 16 KiB array alive (docs/benchmarks/2026-11-24-storm.md). A zero-byte read points them
            // at no buffer; it completes once the backend has bytes, which is at once while a body is under way.
            _ = await source.ReadAsync(Memory<byte>.Empty, cancellationToken);
        }

        return await stream.SendFrameAsync(
            static (destination, state, token) => state.Tap is null
                ? ReadAsync(state.Input, state.Source, destination, token)
                : ReadObservedAsync(state.Input, state.Source, destination, state.Tap, token),
            static (state, token) => WaitForDataAsync(state.Input, state.Source, token),
            (Input: input, Source: source, Tap: tap),
            limit,
            endAtLimit: lastFrameOfBody,
            cancellationToken);
    }

    /// <summary>Completes once the next read returns at once: the pipe holds bytes, or the socket has some (or its end).</summary>
    private static async ValueTask WaitForDataAsync(PipeReader input, Stream source, CancellationToken cancellationToken)
    {
        if (!HoldsBufferedBytes(input))
        {
            _ = await source.ReadAsync(Memory<byte>.Empty, cancellationToken);
        }
    }

    /// <summary>Whether the pipe holds bytes (or the end) that the next read takes without touching the socket.</summary>
    private static bool HoldsBufferedBytes(PipeReader input)
    {
        if (!input.TryRead(out ReadResult buffered))
        {
            return false;
        }

        input.AdvanceTo(buffered.Buffer.Start);
        return !buffered.Buffer.IsEmpty || buffered.IsCompleted;
    }

    /// <summary>Bytes the pipe already holds first; only when it holds none, one read of the socket into <paramref name="destination"/>.</summary>
    private static async ValueTask<int> ReadObservedAsync(PipeReader input, Stream source, Memory<byte> destination, IBodyTap tap, CancellationToken cancellationToken)
    {
        int read = await ReadAsync(input, source, destination, cancellationToken);
        tap.Observe(destination.Span[..read]);
        return read;
    }

    private static async ValueTask<int> ReadAsync(PipeReader input, Stream source, Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (input.TryRead(out ReadResult buffered))
        {
            ReadOnlySequence<byte> take = buffered.Buffer.Slice(0, Math.Min(buffered.Buffer.Length, destination.Length));
            int taken = (int)take.Length; // before AdvanceTo: it releases the segments the sequence points into
            take.CopyTo(destination.Span);
            input.AdvanceTo(take.End);
            if (taken > 0 || buffered.IsCompleted)
            {
                return taken;
            }
        }

        return await source.ReadAsync(destination, cancellationToken);
    }

    private static async Task SendChunkedAsync(IHttpExchange stream, PipeReader input, IBodyTap? tap, CancellationToken cancellationToken)
    {
        var chunks = new ChunkedFraming();
        while (true)
        {
            ReadResult result = await input.ReadAsync(cancellationToken);
            ReadOnlySequence<byte> buffer = result.Buffer;
            while (true)
            {
                if (chunks.DataRemaining > 0)
                {
                    if (buffer.IsEmpty)
                    {
                        break;
                    }

                    ReadOnlySequence<byte> data = buffer.Slice(0, Math.Min(buffer.Length, chunks.DataRemaining));
                    ObserveAll(tap, data);
                    await stream.SendAsync(data, endStream: false, cancellationToken);
                    chunks.OnData(data.Length);
                    buffer = buffer.Slice(data.End);
                    continue;
                }

                if (!TryReadLine(ref buffer, out string? line))
                {
                    break;
                }

                if (chunks.OnLine(line))
                {
                    input.AdvanceTo(buffer.Start);
                    return; // trailers are dropped: the tunnel does not carry them
                }
            }

            input.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted)
            {
                throw new IOException("The backend closed the connection inside a chunked body.");
            }
        }
    }

    /// <summary>Takes one line (a chunk size, a chunk's CRLF, a trailer) off the buffer, CR/LF removed; false while it is incomplete.</summary>
    private static bool TryReadLine(ref ReadOnlySequence<byte> buffer, [NotNullWhen(true)] out string? line)
    {
        SequencePosition? newline = buffer.PositionOf((byte)'\n');
        if (newline is null)
        {
            if (buffer.Length > MaxChunkLineBytes)
            {
                throw new InvalidDataException("Chunk size line too long.");
            }

            line = null;
            return false;
        }

        line = Encoding.Latin1.GetString(buffer.Slice(0, newline.Value)).TrimEnd('\r');
        buffer = buffer.Slice(buffer.GetPosition(1, newline.Value));
        return true;
    }

    private static void ObserveAll(IBodyTap? tap, in ReadOnlySequence<byte> data)
    {
        if (tap is null)
        {
            return;
        }

        foreach (ReadOnlyMemory<byte> segment in data)
        {
            tap.Observe(segment.Span);
        }
    }
}
