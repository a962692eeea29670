using System.Buffers;
using System.IO.Pipelines;
using Tunnel2.Protocol.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// One stream on an uplink: an HTTP request/response exchange (the server opens it with a request head; the client
/// answers with a response head) or a raw byte stream (TCP, version 5). Body bytes from the peer arrive in
/// <see cref="Input"/> or go to a sink; body bytes to the peer go out under the stream's flow-control window.
/// </summary>
/// <remarks>
/// Internal to the protocol library: its owners outside hold it through its role handles, <see cref="IHttpExchange"/>
/// and <see cref="IByteStream"/>, which it implements itself, so a handle costs no object of its own (the stream is
/// pooled; a handle is only a reference to it, as Kestrel's public features are to its internal <c>Http2Stream</c>).
/// Credit bookkeeping, the inbound pipe, the holds and pooling stay in here. After <see cref="Dispose"/> the object may
/// serve another exchange, so a caller that needs <see cref="Id"/> afterwards copies it first.
/// </remarks>
internal sealed partial class UplinkStream : IHttpExchange, IByteStream
{
    /// <summary>The inbound pipes' options: blocks from <see cref="InboundBlockPool"/>, so a crowd's received bodies reuse memory.</summary>
    internal static readonly PipeOptions InboundPipeOptions = InboundPipeOptionsFor(PipeScheduler.ThreadPool);

    /// <summary>As <see cref="InboundPipeOptions"/>, with <paramref name="readerScheduler"/> for the owner's reads.</summary>
    internal static PipeOptions InboundPipeOptionsFor(PipeScheduler readerScheduler) => new(
        pool: InboundBlockPool.Shared,
        readerScheduler: readerScheduler,
        pauseWriterThreshold: 0, // the flow-control window bounds what the peer may send; never block the reader loop
        resumeWriterThreshold: 0,
        minimumSegmentSize: InboundBlockPool.BlockSize,
        useSynchronizationContext: false);

    private readonly Uplink _uplink;
    private readonly Lock _sync = new();
    private readonly Pipe _inbound;
    private readonly SendWindow _sendWindow;
    private TaskCompletionSource<ResponseHead>? _responseHead;
    private CancellationTokenSource? _aborted;
    private IStreamAbortListener? _abortListener;
    private long _openedAt;
    private long _receiveWindow;
    private long _unconsumed;
    private long _receivedBytes;
    private bool _headWaitsForBody;

    /// <summary>The parts that outlive one exchange; <see cref="Start"/> begins each exchange.</summary>
    private UplinkStream(Uplink uplink)
    {
        _uplink = uplink;
        _inbound = new Pipe(uplink.InboundPipeOptions);
        _sendWindow = new SendWindow(uplink.Settings.InitialStreamWindow);
    }

    public uint Id { get; private set; }

    public Uplink Uplink => _uplink;

    /// <summary>The request the server sent (client side only).</summary>
    public RequestHead? RequestHead { get; private set; }

    /// <summary>A raw TCP stream (version 5): who connected to the session's TCP port. Null for an HTTP exchange.</summary>
    public Tcp.TcpStreamOpen? Tcp { get; private set; }

    /// <summary>What stands for the response head of a TCP stream on the server side, which has none on the wire.</summary>
    private static readonly ResponseHead TcpResponseHead = new(200, []);

    /// <summary>
    /// Client side, during <see cref="IUplinkStreamHandler.OnExchangeOpened"/> only: the request is whole (no body) and was
    /// the last frame of the reader's batch, so its handler may start it on the reader's thread instead of queuing it.
    /// </summary>
    public bool MayStartOnReader { get; internal set; }

    /// <summary>An upgraded exchange's bytes: the same object, seen through its byte-stream role.</summary>
    public IByteStream AsByteStream() => this;

    /// <summary>Whether a body follows the request head (client side only).</summary>
    public bool RequestHasBody { get; private set; }

    /// <summary>
    /// The body the peer sends. Whoever reads it reports what it consumed with <see cref="OnInputConsumed"/>: inside this
    /// library only; callers copy it out with <see cref="CopyInputToAsync(PipeWriter, bool, CancellationToken)"/>.
    /// </summary>
    internal PipeReader Input => _inbound.Reader;

    /// <summary>Body bytes the peer has sent on this stream so far (read as a whole, so an idle check can sample it).</summary>
    public long ReceivedBytes => Volatile.Read(ref _receivedBytes);

    /// <summary>Why the stream was reset, if it was.</summary>
    public ProtocolErrorCode? ResetCode
    {
        get
        {
            lock (_sync)
            {
                return _resetCode;
            }
        }
    }

    /// <summary>Cancelled when the peer resets the stream or the uplink dies.</summary>
    public CancellationToken Aborted
    {
        get
        {
            lock (_sync)
            {
                _aborted ??= new CancellationTokenSource();
                if ((_state & StreamState.Aborted) != 0)
                {
                    _aborted.Cancel();
                }

                return _aborted.Token;
            }
        }
    }

    /// <summary>True once the stream was reset (by either side) or its uplink died.</summary>
    public bool IsAborted => ResetCode is not null;

    /// <summary>
    /// Has <paramref name="listener"/> told when the stream is reset or its uplink dies; at once when that already
    /// happened. One listener at a time; a cheaper alternative to <see cref="Aborted"/> on the hot path.
    /// </summary>
    public void SetAbortListener(IStreamAbortListener listener)
    {
        Interlocked.Exchange(ref _abortListener, listener);
        if (ResetCode is not null)
        {
            Interlocked.Exchange(ref _abortListener, null)?.OnStreamAborted();
        }
    }

    /// <summary>
    /// Removes the listener set by <see cref="SetAbortListener"/>. Returns true when the stream was aborted while it
    /// listened: then it has been told, and whatever it guards is in an unknown state. After this returns it is never
    /// told again.
    /// </summary>
    /// <remarks>
    /// An abort completes the inbound pipe under the stream's lock and tells the listener just after; an owner whose
    /// body read fails on another thread may come here in between. The abort is already recorded then, so the listener
    /// is told here instead (it would otherwise never be: the client would close its backend connection with a FIN and
    /// feed a slow backend the queued bytes of a request that is over).
    /// </remarks>
    public bool ClearAbortListener()
    {
        IStreamAbortListener? listener = Interlocked.Exchange(ref _abortListener, null);
        if (listener is null)
        {
            return true;
        }

        if (ResetCode is null)
        {
            return false;
        }

        listener.OnStreamAborted();
        return true;
    }

    /// <summary>Sends the response head (client side). With <paramref name="endStream"/> the response has no body.</summary>
    /// <exception cref="HeadTooLargeException">The head does not fit in one frame.</exception>
    /// <remarks>
    /// A head that announces a small body (a Content-Length within one initial window) does not wake the writer: the
    /// body's frame follows at once on this thread and takes the head with it, in one send (<c>UplinkStream.Outbound.cs</c>).
    /// Should that frame have to wait for its source or for credit, <see cref="SendFrameAsync{TState}"/> sends the head first.
    /// </remarks>
    public void SendResponseHead(ResponseHead head, bool endStream)
    {
        var writer = new PooledBufferWriter();
        HeadCodec.WriteResponseHead(writer, head);
        _headWaitsForBody = !endStream && AnnouncesSmallBody(head, _uplink.Settings.InitialStreamWindow);
        try
        {
            SendHead(FrameType.ResponseHead, writer, endStream);
        }
        catch
        {
            _headWaitsForBody = false;
            throw;
        }
    }

    /// <summary>A final answer whose body has a Content-Length of at most <paramref name="max"/> bytes (and more than none).</summary>
    private static bool AnnouncesSmallBody(ResponseHead head, int max)
    {
        if (head.StatusCode < 200)
        {
            return false;
        }

        long length = -1;
        foreach (HeaderField header in head.Headers)
        {
            if (header.Name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
            {
                return false;
            }

            if (header.Name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase) && !long.TryParse(header.Value, out length))
            {
                return false;
            }
        }

        return length > 0 && length <= max;
    }

    /// <summary>A head held for its body's first frame goes now: the body has to wait (<see cref="SendResponseHead"/>).</summary>
    private void SendWaitingHead()
    {
        if (_headWaitsForBody)
        {
            _headWaitsForBody = false;
            _uplink.SendNowOrWake();
        }
    }

    /// <summary>Waits for the client's response head (server side).</summary>
    public Task<ResponseHead> ReadResponseHeadAsync()
    {
        if (_responseHead is null)
        {
            throw new InvalidOperationException("Only the server side reads a response head.");
        }

        if (_uplink.IsOnItsLoopThread)
        {
            Volatile.Write(ref _ownerOnLoop, true);
        }

        return _responseHead.Task;
    }

    /// <summary>Waits until the peer allows at least one more body byte; returns how many (at most <paramref name="max"/>).</summary>
    internal ValueTask<int> AcquireSendCreditAsync(int max, CancellationToken cancellationToken) =>
        _sendWindow.AcquireAsync(max, cancellationToken);

    /// <summary>Whether <see cref="AcquireSendCreditAsync"/> would return at once.</summary>
    public bool HasSendCredit => _sendWindow.HasCredit;

    /// <summary>Gives back credit acquired but not sent (the body layer acquires before it knows how much it will read).</summary>
    internal void ReturnSendCredit(int unused)
    {
        if (unused > 0)
        {
            _sendWindow.Return(unused);
        }
    }

    /// <summary>
    /// Sends body bytes held in an array rented from <see cref="ArrayPool{T}.Shared"/>; the stream takes ownership of
    /// it. The caller must have acquired <paramref name="length"/> bytes of credit.
    /// </summary>
    internal void SendPooledData(byte[] pooled, int length, bool endStream) => SendPooledData(pooled, length, endStream, holdsQueuedDataBudget: false);

    /// <param name="holdsQueuedDataBudget">The caller reserved <paramref name="length"/> bytes in the uplink's <see cref="QueuedDataBudget"/>; they go back when the frame leaves the queue.</param>
    internal void SendPooledData(byte[] pooled, int length, bool endStream, bool holdsQueuedDataBudget)
    {
        OutboundFrame frame = OutboundFrame.WithPooledPayload(FrameType.Data, endStream ? FrameFlags.EndStream : FrameFlags.None, Id, pooled, length, holdsQueuedDataBudget);
        if ((uint)length > (uint)_uplink.Settings.MaxFramePayload)
        {
            Discard(frame);
            throw new ArgumentOutOfRangeException(nameof(length), length, $"A Data frame carries at most {_uplink.Settings.MaxFramePayload} bytes.");
        }

        if (!TryTransition(endStream ? StreamState.LocalEnded : StreamState.Open, StreamState.LocalEnded, out _, send: frame))
        {
            Discard(frame);
            throw NotWritable();
        }
    }

    /// <summary>A frame that will not be sent: its buffer goes back to the pool, and its reserved budget to the uplink.</summary>
    private void Discard(in OutboundFrame frame)
    {
        frame.ReturnBuffer();
        if (frame.HoldsQueuedDataBudget)
        {
            _uplink.Scheduler.DataBudget.Release(frame.PayloadLength);
        }
    }

    /// <summary>Ends the body this side sends.</summary>
    public void SendEnd()
    {
        if (!TrySendEnd())
        {
            throw NotWritable();
        }
    }

    /// <summary>Ends the body this side sends, unless it has ended already or the stream was reset; true when it ended it now.</summary>
    public bool TrySendEnd() =>
        TryTransition(StreamState.LocalEnded, StreamState.LocalEnded, out _, send: OutboundFrame.WithPooledPayload(FrameType.Data, FrameFlags.EndStream, Id, null, 0));

    /// <summary>
    /// Reports body bytes the application has taken from <see cref="Input"/>. The stream then tops the peer's credit up
    /// to its share of the receive budget (<see cref="Uplink.StreamWindowTarget"/>), counting what is still buffered
    /// here, once that is worth a frame (half the share), so a steady reader costs one WindowUpdate per half window and
    /// a reader that stops holds at most its share.
    /// </summary>
    internal void OnInputConsumed(long bytes)
    {
        if (bytes <= 0)
        {
            return;
        }

        int grant;
        lock (_sync)
        {
            _unconsumed = Math.Max(0, _unconsumed - bytes);
            if ((_state & StreamState.RemoteEnded) != 0)
            {
                return;
            }

            long footprint = _receiveWindow + _unconsumed;
            int target = _uplink.StreamWindowTarget;
            long want = target - footprint;
            if (want < target / 2)
            {
                return;
            }

            int floor = (int)Math.Clamp(_uplink.Settings.InitialStreamWindow - footprint, 0, want);
            grant = _uplink.ReserveReceiveCredit((int)want, floor);
            if (grant == 0)
            {
                return;
            }

            _receiveWindow += grant;
        }

        _uplink.TryEnqueue(OutboundFrame.WindowUpdate(Id, grant));
    }

    /// <summary>Cancels the exchange: the peer is told with a Reset frame and both directions fail.</summary>
    public void Reset(ProtocolErrorCode code)
    {
        bool localEnded;
        lock (_sync)
        {
            if ((_state & (StreamState.Aborted | StreamState.Removed)) != 0)
            {
                return;
            }

            localEnded = (_state & StreamState.LocalEnded) != 0;
        }

        if (localEnded)
        {
            // What this side sent is complete and may still be queued (an answer that came before the whole request
            // body): the Reset follows it, so the peer gets the whole answer and then stops sending.
            try
            {
                QueueOutbound(OutboundFrame.Reset(Id, code));
            }
            catch (UplinkClosedException)
            {
                // Nothing more goes out; the failure below tells this side.
            }
        }
        else
        {
            DropQueuedData();
            _uplink.TryEnqueue(OutboundFrame.Reset(Id, code));
        }

        Fail(code, new StreamResetException(code), dropQueued: false);
    }

    /// <summary>
    /// Finishes the exchange from this side: resets it if unfinished. The owner lets go of the stream here and must not
    /// touch it afterwards: once nothing else holds it (a body loop still running), its inbound buffer goes and it
    /// serves another exchange.
    /// </summary>
    public void Dispose()
    {
        Reset(ProtocolErrorCode.Cancelled);
        if (!TryTransition(StreamState.Disposed, StreamState.Disposed, out _))
        {
            return;
        }

        lock (_sync)
        {
            _aborted?.Dispose();
            _aborted = null;
        }

        Release();
    }

    private void SendHead(FrameType type, PooledBufferWriter writer, bool endStream)
    {
        byte[] pooled = writer.Detach(out int length);
        if (length > _uplink.Settings.MaxFramePayload)
        {
            ArrayPool<byte>.Shared.Return(pooled);
            throw new HeadTooLargeException(length, _uplink.Settings.MaxFramePayload);
        }

        OutboundFrame frame = OutboundFrame.WithPooledPayload(type, endStream ? FrameFlags.EndStream : FrameFlags.None, Id, pooled, length);
        if (!TryTransition(endStream ? StreamState.LocalEnded : StreamState.Open, StreamState.LocalEnded, out _, send: frame))
        {
            frame.ReturnBuffer();
            throw NotWritable();
        }
    }

    private Exception NotWritable() =>
        ResetCode is { } code ? new StreamResetException(code) : new InvalidOperationException("The stream's sending side has ended.");

    // How the server's owner of a stream learns its response head. The reader takes the head when it arrives
    // (OnResponseHead) and hands it over once the batch of frames it came in is dispatched: a whole small
    // answer on the reader's own thread, so that the owner relays it without another thread-pool hand-off; anything else
    // on a thread-pool work item, so the reader never carries a long body. A failure (a reset, the uplink's close) fails
    // the wait at once, as the stream's state changes, and the owner's error path runs on the thread that failed it.

    private ResponseHead? _arrivedHead;
    private HeadCompletion? _headCompletion;
    private bool _ownerOnLoop;

    /// <summary>
    /// Whether the owner awaits its head on the uplink's own loop thread (the public HTTP listener on the server's loop):
    /// its continuation runs on the loop anyway, so the reader may deliver a whole small answer inline, with no wake.
    /// </summary>
    internal bool OwnerOnLoop => Volatile.Read(ref _ownerOnLoop);

    /// <summary>
    /// Whether the answer is whole and small: the head came, the body ended (or there is none) within one initial window,
    /// nothing was reset. Its owner then finds all of it buffered and relays it without waiting.
    /// </summary>
    internal bool IsWholeSmallAnswer
    {
        get
        {
            lock (_sync)
            {
                return (_state & (StreamState.RemoteEnded | StreamState.Aborted)) == StreamState.RemoteEnded
                    && _unconsumed <= _uplink.Settings.InitialStreamWindow;
            }
        }
    }

    /// <summary>
    /// Hands the arrived head to the owner (called by the reader loop after the batch it came in). With
    /// <paramref name="inline"/>, the owner's continuation runs on this thread; otherwise on a thread-pool work item.
    /// </summary>
    internal void DeliverResponseHead(bool inline)
    {
        if (inline)
        {
            _responseHead!.TrySetResult(_arrivedHead!);
        }
        else
        {
            DeliverLater();
        }
    }

    /// <summary>
    /// A TCP stream (server side) has no response head on the wire: its stand-in has arrived and is handed over as it
    /// opens, before the stream is in the table, so Data may come at once (<see cref="OnData"/> looks at the arrived head),
    /// no head timeout applies, a ResponseHead frame for it is a second head, and the reader never delivers one for it.
    /// </summary>
    private void TakeTcpStandInHead()
    {
        if (_responseHead is not null)
        {
            _arrivedHead = TcpResponseHead;
            _responseHead.TrySetResult(TcpResponseHead);
        }
    }

    private void DeliverLater()
    {
        // The work item holds the stream, so the object cannot serve another exchange before it ran.
        if (TryHold())
        {
            ThreadPool.UnsafeQueueUserWorkItem(_headCompletion ??= new HeadCompletion(this), preferLocal: false);
        }
    }

    /// <summary>One per stream object (they are pooled), so a head delivered on the pool costs no allocation.</summary>
    private sealed class HeadCompletion(UplinkStream stream) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            stream._responseHead?.TrySetResult(stream._arrivedHead!);

            stream.Release();
        }
    }
}
