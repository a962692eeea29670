using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// An HTTP body from the peer into a pipe writer (the server's response to its caller, the client's request to its
/// backend) without the inbound pipe's copy (issue 52 item 3). While the copy loop has nothing buffered, the reader
/// writes each Data frame's payload from its own buffer straight into the destination and flushes it, under the
/// stream's lock; credit goes back once that flush has completed, as in the loop. A flush that cannot complete at once
/// (the destination's own buffer is full), or a write that fails, is handed to the copy loop, which awaits it; until it
/// has, and has copied what came meanwhile, the reader puts the payload into the pipe again. So one party writes to the
/// destination at a time, the reader never waits, and what is held is still bounded by the stream's window.
/// </summary>
internal sealed partial class UplinkStream
{
    // All under _sync. The destination while the reader may write to it; its framing; whether the reader may now.
    private PipeWriter? _bodyDestination;
    private bool _bodyChunked;
    private IBodyTap? _bodyTap;
    private CancellationToken _bodyCancellation;
    private bool _readerWritesBody;

    /// <summary>Bytes the pipe took that no body loop has copied yet (under the lock).</summary>
    private long _piped;

    /// <summary>Bytes the pipe took in this exchange (under the lock).</summary>
    private long _pipedTotal;

    /// <summary>The peer's bytes that went through the inbound pipe in this exchange, the rest went straight to a destination (for tests).</summary>
    internal long PipedBytes
    {
        get
        {
            lock (_sync)
            {
                return _pipedTotal;
            }
        }
    }

    // What the reader hands to the copy loop (under the lock): a flush it did not see complete, for so many bytes,
    // or what its write threw.
    private ValueTask<FlushResult> _readerFlush;
    private long _readerFlushBytes;
    private bool _hasReaderFlush;
    private Exception? _bodyFault;

    /// <summary>Under the lock, on the reader: the payload written and flushed to the destination.</summary>
    /// <returns>The bytes the destination took now (their credit goes back); 0 when the copy loop takes over.</returns>
    private long WriteBodyOnReader(in ReadOnlySequence<byte> payload)
    {
        PipeWriter destination = _bodyDestination!;
        try
        {
            WriteBody(destination, payload, _bodyChunked, _bodyTap);
            ValueTask<FlushResult> flush = destination.FlushAsync(_bodyCancellation);
            if (flush.IsCompletedSuccessfully)
            {
                FlushResult result = flush.Result;
                if (!result.IsCanceled && !result.IsCompleted)
                {
                    return payload.Length;
                }

                flush = new ValueTask<FlushResult>(result); // the copy loop reports it
            }

            _readerFlush = flush;
            _readerFlushBytes = payload.Length;
            _hasReaderFlush = true;
        }
        catch (Exception ex)
        {
            _bodyFault = ex; // the copy loop throws it, on its owner's thread
        }

        _readerWritesBody = false;
        _inbound.Reader.CancelPendingRead(); // wakes the copy loop
        return 0;
    }

    /// <summary>Writes <paramref name="body"/> as it is or as one chunk, past <paramref name="tap"/>.</summary>
    private static void WriteBody(PipeWriter destination, in ReadOnlySequence<byte> body, bool chunked, IBodyTap? tap)
    {
        if (chunked)
        {
            ChunkedEncoding.WriteChunkStart(destination, body.Length);
        }

        foreach (ReadOnlyMemory<byte> segment in body)
        {
            destination.Write(segment.Span);
            tap?.Observe(segment.Span);
        }

        if (chunked)
        {
            ChunkedEncoding.WriteChunkEnd(destination);
        }
    }

    private static void ThrowIfStopped(FlushResult flush)
    {
        if (flush.IsCanceled || flush.IsCompleted)
        {
            throw new IOException("The destination stopped taking the body.");
        }
    }

    /// <summary>The copy loop: waits for what the reader handed over, if anything, and gives its bytes' credit back.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitReaderFlushAsync()
    {
        ValueTask<FlushResult> flush;
        long bytes;
        lock (_sync)
        {
            if (_bodyFault is { } fault)
            {
                _bodyFault = null;
                ExceptionDispatchInfo.Throw(fault);
            }

            if (!_hasReaderFlush)
            {
                return;
            }

            flush = _readerFlush;
            bytes = _readerFlushBytes;
            _readerFlush = default;
            _hasReaderFlush = false;
        }

        ThrowIfStopped(await flush.ConfigureAwait(false));
        OnInputConsumed(bytes);
    }

    /// <summary>
    /// The copy loop took <paramref name="consumed"/> of the pipe's bytes: if the pipe holds no more, the reader writes
    /// the next Data frame's payload to the destination itself.
    /// </summary>
    private void HandBodyToReader(PipeWriter destination, bool chunked, IBodyTap? tap, long consumed, CancellationToken cancellationToken)
    {
        lock (_sync)
        {
            _piped = Math.Max(0, _piped - consumed);
            if (_piped > 0 || _bodyFault is not null || (_state & (StreamState.RemoteEnded | StreamState.Disposed)) != 0)
            {
                return;
            }

            _bodyDestination = destination;
            _bodyChunked = chunked;
            _bodyTap = tap;
            _bodyCancellation = cancellationToken;
            _readerWritesBody = true;
        }
    }

    /// <summary>
    /// The copy loop ends: the reader stops writing to the destination (this waits for a write in progress), and a flush
    /// the reader left under way is awaited, so the loop ends only once nobody touches the destination, as before: its
    /// owner may then complete it, reuse it (a backend connection) or let Kestrel finish the response.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask TakeBodyFromReaderAsync()
    {
        ValueTask<FlushResult> flush;
        lock (_sync)
        {
            _readerWritesBody = false;
            _bodyDestination = null;
            _bodyTap = null;
            _bodyCancellation = default;
            _bodyFault = null;
            flush = _readerFlush;
            _readerFlush = default;
            _hasReaderFlush = false;
        }

        try
        {
            await flush.ConfigureAwait(false);
        }
        catch (Exception)
        {
            // The loop failed already (that is why a flush was left); its own exception is the one its owner sees.
        }
    }

    /// <summary>An HTTP body's destination for the copy loop, which the reader shares (see the type's summary).</summary>
    private readonly struct BodyDestination(UplinkStream stream, PipeWriter destination, bool chunked, IBodyTap? tap) : IInboundDestination
    {
        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
        public async ValueTask WriteAsync(ReadOnlySequence<byte> buffer, bool last, CancellationToken cancellationToken)
        {
            await stream.AwaitReaderFlushAsync().ConfigureAwait(false);
            bool lastChunk = last && chunked;
            if (buffer.IsEmpty && !lastChunk)
            {
                return;
            }

            if (!buffer.IsEmpty)
            {
                WriteBody(destination, buffer, chunked, tap);
            }

            if (lastChunk)
            {
                ChunkedEncoding.WriteLastChunk(destination);
            }

            ThrowIfStopped(await destination.FlushAsync(cancellationToken).ConfigureAwait(false));
        }

        public void Written(long consumed, CancellationToken cancellationToken) =>
            stream.HandBodyToReader(destination, chunked, tap, consumed, cancellationToken);

        public ValueTask LeaveAsync() => stream.TakeBodyFromReaderAsync();
    }
}
