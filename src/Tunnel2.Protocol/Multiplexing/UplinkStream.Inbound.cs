using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The peer's bytes: what the uplink's reader loop delivers to the stream, and the ways an owner takes them (a sink fed
/// from the reader's buffer, or a copy loop out of the inbound pipe), each giving the peer's credit back once the
/// destination took the bytes.
/// </summary>
internal sealed partial class UplinkStream : ISendProgressListener
{
    /// <summary>
    /// Takes the client's response head (server side). It is not handed to the owner here but by
    /// <see cref="DeliverResponseHead"/> once the reader has dispatched the whole batch of frames it came in, so that a
    /// small answer whose body came in the same batch is complete when the owner sees it.
    /// </summary>
    /// <returns>True when the head is to be delivered; false when the stream was reset before it came.</returns>
    internal bool OnResponseHead(ResponseHead head, bool endStream)
    {
        if (_responseHead is null)
        {
            throw new ProtocolViolationException($"Response head on stream {Id}, which this side opened as a client.");
        }

        lock (_sync)
        {
            if ((_state & StreamState.Aborted) != 0)
            {
                return false; // in flight when this side reset the stream (the head came too late, or the caller left)
            }

            if (_arrivedHead is not null)
            {
                throw new ProtocolViolationException($"Second response head on stream {Id}.");
            }

            _arrivedHead = head;
        }

        if (endStream)
        {
            EndInbound();
        }

        return true;
    }

    /// <exception cref="ProtocolViolationException">Data after the end of the stream, or beyond the window.</exception>
    internal void OnData(in ReadOnlySequence<byte> payload, bool endStream)
    {
        IStreamInboundSink? sink = null;
        long direct = 0;
        lock (_sync)
        {
            if ((_state & StreamState.RemoteEnded) != 0)
            {
                if ((_state & StreamState.Aborted) != 0)
                {
                    return; // in flight when we reset it
                }

                throw new ProtocolViolationException($"Data after the end of stream {Id}.");
            }

            if (_responseHead is not null && _arrivedHead is null)
            {
                throw new ProtocolViolationException($"Data before the response head on stream {Id}.");
            }

            _receiveWindow -= payload.Length;
            if (_receiveWindow < 0)
            {
                throw new ProtocolViolationException($"Stream {Id} sent beyond its flow-control window.");
            }

            _uplink.AddReceiveCredit(-payload.Length);
            Volatile.Write(ref _receivedBytes, _receivedBytes + payload.Length);
            if ((_state & StreamState.Disposed) == 0 && !payload.IsEmpty)
            {
                _unconsumed += payload.Length;
                sink = _sink;
            }

            if (sink is null && (_state & StreamState.Disposed) == 0 && !payload.IsEmpty)
            {
                if (_readerWritesBody)
                {
                    direct = WriteBodyOnReader(payload);
                }
                else
                {
                    Pipe(payload);
                }
            }
        }

        // Outside the lock: the sink sends, and reports what was taken (which takes the lock again).
        sink?.OnInboundData(payload);
        OnInputConsumed(direct);
        if (endStream)
        {
            EndInbound();
        }
    }

    /// <summary>Under the lock: the payload into the inbound pipe, for whoever reads it (a copy loop, a wait for the body).</summary>
    private void Pipe(in ReadOnlySequence<byte> payload)
    {
        foreach (ReadOnlyMemory<byte> segment in payload)
        {
            _inbound.Writer.Write(segment.Span);
        }

        _piped += payload.Length;
        _pipedTotal += payload.Length;

        // Never pauses (pauseWriterThreshold is 0), so the flush completes synchronously.
        ValueTask<FlushResult> flush = _inbound.Writer.FlushAsync();
        if (!flush.IsCompletedSuccessfully)
        {
            throw new InvalidOperationException("Inbound stream buffer paused despite an unbounded threshold.");
        }
    }

    internal void EndInbound()
    {
        TryTransition(StreamState.RemoteEnded, StreamState.Open, out StreamState added);
        if ((added & StreamState.RemoteEnded) != 0 && Volatile.Read(ref _sink) is { } sink)
        {
            sink.OnInboundEnd();
        }
    }

    internal void OnWindowUpdate(int increment) => _sendWindow.Grant(increment);

    internal void OnReset(ProtocolErrorCode code) => Fail(code, new StreamResetException(code), dropQueued: true);

    internal void OnUplinkClosed(UplinkClosedException reason) => Fail(ProtocolErrorCode.Cancelled, reason, dropQueued: true);

    /// <summary>True when this stream has waited at least <paramref name="timeoutMs"/> for its response head (server side).</summary>
    internal bool IsResponseHeadOverdue(long now, long timeoutMs) =>
        _responseHead is { Task.IsCompleted: false } && Volatile.Read(ref _arrivedHead) is null && now - _openedAt >= timeoutMs;

    /// <param name="dropQueued">Whether frames this side still has queued are dropped: the peer will not read them.</param>
    private void Fail(ProtocolErrorCode code, Exception reason, bool dropQueued) =>
        TryTransition(StreamState.Aborted, StreamState.Aborted, out _, new StreamAbort(code, reason, dropQueued));

    // A byte stream's ends for an owner on an event loop, which can neither wait on tasks nor read a pipe (issue 52, stage
    // 2): the peer's bytes straight from the reader's buffer to a sink, credit taken without waiting and a listener told
    // when more comes, and pooled buffers handed to the writer as Data frames.

    private IStreamInboundSink? _sink;

    /// <summary>
    /// From now on the peer's bytes go to <paramref name="sink"/>, not to the inbound pipe. Set it in
    /// <see cref="IUplinkStreamHandler.OnByteStreamOpened"/> (on the reader's thread, before any Data frame of the stream).
    /// </summary>
    public void AttachInboundSink(IStreamInboundSink sink) => Volatile.Write(ref _sink, sink);

    /// <summary>
    /// As <see cref="AttachInboundSink"/>, for an owner that waited on the inbound pipe first (the server's TCP door waits
    /// for the target's first answer before it relays): what the pipe holds goes to <paramref name="sink"/> first, then
    /// the peer's END_STREAM if it came already. Under the stream's lock, so the reader's next frame cannot overtake it.
    /// </summary>
    public void TakeOverInbound(IStreamInboundSink sink)
    {
        bool ended;
        lock (_sync)
        {
            Volatile.Write(ref _sink, sink);
            ended = (_state & (StreamState.RemoteEnded | StreamState.Aborted)) == StreamState.RemoteEnded;
            if ((_state & (StreamState.Aborted | StreamState.Disposed)) == 0)
            {
                HandOverPiped(sink);
            }
        }

        if (ended)
        {
            sink.OnInboundEnd();
        }
    }

    /// <summary>Under the lock: the bytes the pipe holds, to the sink (which reports what it took, as for a frame).</summary>
    private void HandOverPiped(IStreamInboundSink sink)
    {
        PipeReader input = _inbound.Reader;
        ReadResult piped;
        try
        {
            if (!input.TryRead(out piped))
            {
                return;
            }
        }
        catch (Exception ex) when (ex is StreamResetException or UplinkClosedException or InvalidOperationException)
        {
            return; // failed meanwhile: the abort listener ends the owner
        }

        if (!piped.Buffer.IsEmpty)
        {
            sink.OnInboundData(piped.Buffer);
        }

        input.AdvanceTo(piped.Buffer.End);
    }

    /// <summary>The sink's destination took <paramref name="bytes"/> of the peer's bytes: the peer's credit comes back.</summary>
    public void ReportInboundConsumed(int bytes) => OnInputConsumed(bytes);

    // The copy loop out of the inbound pipe (CopyInputAsync), into a pipe writer (an HTTP body, plain or chunked, which
    // the reader also writes to while the pipe is empty), a stream or a socket (a byte stream). It holds the stream
    // while it runs (UplinkStream.State.cs).

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
    /// <remarks>
    /// What the pipe holds (the body's first frame, and whatever comes while the destination is busy) is copied here; in
    /// between, the reader writes each Data frame's payload to the destination itself (the HTTP body path below).
    /// </remarks>
    public Task CopyInputToAsync(PipeWriter destination, bool chunked, IBodyTap? tap, CancellationToken cancellationToken) =>
        CopyInputToAsync(destination, chunked, tap, sent: null, cancellationToken);

    /// <inheritdoc cref="CopyInputToAsync(PipeWriter, bool, IBodyTap, CancellationToken)"/>
    /// <param name="sent">The destination's send progress, when it reports one: the credit for what the reader flushed at
    /// once goes back when it has been sent (<see cref="ISendProgress"/>).</param>
    public Task CopyInputToAsync(PipeWriter destination, bool chunked, IBodyTap? tap, ISendProgress? sent, CancellationToken cancellationToken)
    {
        if (sent is not null)
        {
            lock (_sync)
            {
                _bodySent = sent;
            }
        }

        return CopyInputAsync(new BodyDestination(this, destination, chunked, tap), cancellationToken);
    }

    /// <summary>The largest write of inbound bytes that came in several pieces (one send each).</summary>
    private const int CoalescedWriteLimit = 64 * 1024;

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
                    await destination.WriteAsync(buffer, result.IsCompleted, cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    input.AdvanceTo(buffer.End);
                }

                OnInputConsumed(destination.CreditNow(consumed));
                if (result.IsCompleted)
                {
                    return;
                }

                destination.Written(consumed, cancellationToken);
            }
        }
        finally
        {
            await destination.LeaveAsync().ConfigureAwait(false);
            Release();
        }
    }

    /// <summary>Where <see cref="CopyInputAsync{TDestination}"/> writes (a struct per kind, so the loop is not shared through a delegate).</summary>
    private interface IInboundDestination
    {
        /// <param name="last">The peer ended its side: <paramref name="buffer"/> is the end of its bytes.</param>
        ValueTask WriteAsync(ReadOnlySequence<byte> buffer, bool last, CancellationToken cancellationToken);

        /// <summary>Of <paramref name="consumed"/> bytes the destination took, those whose credit goes back now.</summary>
        long CreditNow(long consumed);

        /// <summary>The destination took <paramref name="consumed"/> bytes of the pipe's, and the loop reads on.</summary>
        void Written(long consumed, CancellationToken cancellationToken);

        /// <summary>The loop ends, however it ends: nobody but its owner touches the destination once this completes.</summary>
        ValueTask LeaveAsync();
    }

    private readonly struct StreamDestination(Stream stream) : IInboundDestination
    {
        public long CreditNow(long consumed) => consumed;

        public ValueTask WriteAsync(ReadOnlySequence<byte> buffer, bool last, CancellationToken cancellationToken) =>
            UplinkStream.WriteAsync(stream, buffer, cancellationToken);

        public void Written(long consumed, CancellationToken cancellationToken)
        {
        }

        public ValueTask LeaveAsync() => ValueTask.CompletedTask;
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

    /// <summary>
    /// Copies the peer's body into <paramref name="destination"/> as <see cref="CopyInputToAsync(PipeWriter, bool, CancellationToken)"/>
    /// does, but sends the inbound buffer's own segments, with no write buffer (and no copy) of its own in between. Credit
    /// goes back once the socket has taken the bytes, so a caller or target that stops reading holds its stream's window.
    /// The socket is not shut down at the end; the relay passes the END_STREAM on as it sees fit.
    /// </summary>
    /// <exception cref="StreamResetException">The peer reset the stream mid-body.</exception>
    /// <exception cref="UplinkClosedException">The uplink died mid-body.</exception>
    /// <exception cref="SocketException">The socket stopped taking the body.</exception>
    public Task CopyInputToAsync(Socket destination, CancellationToken cancellationToken) =>
        CopyInputAsync(new SocketDestination(destination), cancellationToken);

    private readonly struct SocketDestination(Socket socket) : IInboundDestination
    {
        public long CreditNow(long consumed) => consumed;

        public async ValueTask WriteAsync(ReadOnlySequence<byte> buffer, bool last, CancellationToken cancellationToken)
        {
            foreach (ReadOnlyMemory<byte> segment in buffer)
            {
                // A stream socket's send completes only once it has taken every byte.
                await socket.SendAsync(segment, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            }
        }

        public void Written(long consumed, CancellationToken cancellationToken)
        {
        }

        public ValueTask LeaveAsync() => ValueTask.CompletedTask;
    }

    // ---- The HTTP body path ----
    // An HTTP body from the peer into a pipe writer (the server's response to its caller, the client's request to its
    // backend) without the inbound pipe's copy (issue 52 item 3). While the copy loop has nothing buffered, the reader
    // writes each Data frame's payload from its own buffer straight into the destination and flushes it, under the
    // stream's lock; credit goes back once that flush has completed, as in the loop. A flush that cannot complete at once
    // (the destination's own buffer is full), or a write that fails, is handed to the copy loop, which awaits it; until it
    // has, and has copied what came meanwhile, the reader puts the payload into the pipe again. So one party writes to the
    // destination at a time, the reader never waits, and what is held is still bounded by the stream's window.

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
                    return CreditWhenSent(payload.Length);
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
        WakeCopyLoop();
        return 0;
    }

    /// <summary>
    /// Under the lock, on the reader: wakes the copy loop to take over. On a loop it runs at the end of the turn, on the
    /// loop, where the flush it awaits completes when the destination is the loop's (the server's public listener); a
    /// pool worker woken for it would only hand it back (<see cref="InboundReaderScheduler"/>).
    /// </summary>
    private void WakeCopyLoop()
    {
        if (_uplink.InboundScheduler is { IsOnLoopThread: true } loop)
        {
            loop.WakeAtTurnEnd(_inbound.Reader);
        }
        else
        {
            _inbound.Reader.CancelPendingRead();
        }
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
            WriteWhole(destination, segment.Span);
            tap?.Observe(segment.Span);
        }

        if (chunked)
        {
            ChunkedEncoding.WriteChunkEnd(destination);
        }
    }

    /// <summary>
    /// <paramref name="bytes"/> into one piece of the destination's memory, asked for at their size: a pipe's default
    /// blocks are 4 KiB (Kestrel's), and a 256 KiB payload in 64 of them cost a block each to fill and as many vectors to
    /// send, where one larger segment (a pipe rents it from the array pool) goes out in one.
    /// </summary>
    private static void WriteWhole(PipeWriter destination, ReadOnlySpan<byte> bytes)
    {
        Span<byte> into = destination.GetSpan(bytes.Length);
        if (into.Length < bytes.Length)
        {
            destination.Write(bytes);
            return;
        }

        bytes.CopyTo(into);
        destination.Advance(bytes.Length);
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
        OnInputConsumed(CreditOnceSent(bytes));
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
            StopCreditWhenSent();
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

    // ---- Credit once sent ----
    // The HTTP body path into a destination that reports its sends (ISendProgress, the server's public
    // connection on its loop): a payload flushed into it, by the reader or the copy loop, has its credit given back when
    // the destination has sent it, not when the flush returned. The destination's output limit sits a window above its own
    // so those flushes complete at once (the reader keeps writing, no pool hand-off), and what a slow caller holds here is
    // still bounded by the stream's window.

    // All under _sync. The body destination's progress while the body is copied into it; the bytes flushed there whose
    // credit has not gone back; the destination's flushed count once the last of them was flushed.
    private ISendProgress? _bodySent;
    private long _sentOwed;
    private long _sentMark;

    /// <summary>Under the lock: <paramref name="bytes"/> reached the destination in a flush that has completed (the
    /// reader's, at once, or the copy loop's).</summary>
    /// <returns>The bytes whose credit goes back now (all of them, without a progress to wait for).</returns>
    private long CreditWhenSent(long bytes)
    {
        if (_bodySent is not { } progress)
        {
            return bytes;
        }

        long mark = progress.Flushed;
        if (progress.NotifyWhenSent(mark, this))
        {
            _sentOwed += bytes;
            _sentMark = mark;
            return 0;
        }

        long sent = _sentOwed + bytes;
        _sentOwed = 0;
        return sent;
    }

    /// <summary>The copy loop: <paramref name="bytes"/> reached the destination in a flush that has completed.</summary>
    /// <returns>The bytes whose credit goes back now.</returns>
    private long CreditOnceSent(long bytes)
    {
        lock (_sync)
        {
            return CreditWhenSent(bytes);
        }
    }

    /// <summary>On the destination's thread: what was flushed up to the last mark has left, so its credit goes back.</summary>
    void ISendProgressListener.OnSent(ISendProgress source, long sent)
    {
        long owed;
        lock (_sync)
        {
            // Another body's destination, or an earlier request that a later flush moved on from.
            if (!ReferenceEquals(source, _bodySent) || sent < _sentMark)
            {
                return;
            }

            owed = _sentOwed;
            _sentOwed = 0;
        }

        OnInputConsumed(owed);
    }

    /// <summary>Under the lock: the body's copy ends. What is owed is dropped: the peer's side is over, or the stream goes.</summary>
    private void StopCreditWhenSent()
    {
        _bodySent?.Forget(this);
        _bodySent = null;
        _sentOwed = 0;
        _sentMark = 0;
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

        public long CreditNow(long consumed) => stream.CreditOnceSent(consumed);

        public void Written(long consumed, CancellationToken cancellationToken) =>
            stream.HandBodyToReader(destination, chunked, tap, consumed, cancellationToken);

        public ValueTask LeaveAsync() => stream.TakeBodyFromReaderAsync();
    }
}
