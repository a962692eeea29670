using System.Buffers;
using System.IO.Pipelines;
using Microsoft.Extensions.Logging;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// One multiplexed connection between a client and the server, with one owner per job, as in Kestrel's HTTP/2:
/// <list type="bullet">
/// <item>the reader loop (<c>Uplink.Reader.cs</c>) dispatches frames to their streams;</item>
/// <item><see cref="UplinkStreamTable"/> holds the open streams;</item>
/// <item><see cref="FrameScheduler"/> orders what goes out (control frames and heads first, then streams that have sent
/// little, then bulk streams in turn) and <see cref="UplinkFrameWriter"/> writes it, coalesced into few sends;</item>
/// <item><see cref="UplinkKeepAlive"/> pings, notices a silent peer and overdue response heads.</item>
/// </list>
/// This class opens and closes streams and the uplink itself. The per-stream flow-control windows and the connection
/// budget (<c>Uplink.ReceiveCredit.cs</c>) bound what the streams' queues and buffers can hold.
/// The owner disposes it after <see cref="RunAsync"/> returns.
/// </summary>
public sealed partial class Uplink : IDisposable
{
    /// <summary>
    /// Pongs queued and not yet written beyond which the peer is flooding Pings faster than it reads the answers: a
    /// protocol error rather than a queue that grows (keep-alive sends one Ping per interval).
    /// </summary>
    internal const int MaxQueuedPongs = 64;

    /// <summary>After a close, how long <see cref="RunAsync"/> waits for the writer loop before returning anyway.</summary>
    private static readonly TimeSpan WriterStopGrace = TimeSpan.FromSeconds(2);

    private readonly IDuplexPipe? _transport;
    private readonly LoopUplinkTransport? _loopTransport;
    private readonly ILogger _logger;
    private readonly IUplinkStreamHandler? _streamHandler;
    private readonly FrameScheduler _scheduler;
    private readonly UplinkStreamTable _streams = new();
    private readonly IUplinkWriter _frameWriter;
    private readonly UplinkKeepAlive _keepAlive;
    private readonly CancellationTokenSource _closed = new();
    private readonly CancellationToken _closedToken;
    private readonly Lock _openLock = new();
    private int _closeState;
    private string? _closeReason;
    private string? _drainCloseReason;
    private volatile bool _peerDraining;
    private volatile bool _localDraining;
    private volatile bool _peerReady = true;
    private Task? _writer;

    public Uplink(
        IDuplexPipe transport,
        UplinkSettings settings,
        UplinkRole role,
        ILogger logger,
        IUplinkStreamHandler? streamHandler = null,
        string? name = null)
        : this(settings, role, logger, streamHandler, name)
    {
        _transport = transport;
        _frameWriter = new UplinkFrameWriter(transport.Output, (transport as DuplexPipe)?.Connection, _scheduler, this);
        _keepAlive = new UplinkKeepAlive(this, _streams, _frameWriter);
    }

    /// <summary>An uplink whose reader and writer run on an event loop (<c>Uplink.Loop.cs</c>).</summary>
    private Uplink(LoopUplinkTransport.Start start, UplinkSettings settings, UplinkRole role, ILogger logger, IUplinkStreamHandler? streamHandler, string? name)
        : this(settings, role, logger, streamHandler, name)
    {
        _loopTransport = new LoopUplinkTransport(start, this);
        _frameWriter = _loopTransport;
        if (role == UplinkRole.Server)
        {
            InboundScheduler = new InboundReaderScheduler(start.Loop);
            InboundPipeOptions = UplinkStream.InboundPipeOptionsFor(InboundScheduler);
        }
        _keepAlive = new UplinkKeepAlive(this, _streams, _frameWriter);
    }

    private Uplink(UplinkSettings settings, UplinkRole role, ILogger logger, IUplinkStreamHandler? streamHandler, string? name)
    {
        if (role == UplinkRole.Client && streamHandler is null)
        {
            throw new ArgumentException("The client side needs a stream handler.", nameof(streamHandler));
        }

        Settings = settings;
        Role = role;
        _logger = logger;
        _streamHandler = streamHandler;
        Name = name ?? role.ToString();
        _scheduler = new FrameScheduler(settings.QueuedDataLimit);
        StreamPool = new UplinkStreamPool(settings.StreamPoolSize);
        _closedToken = _closed.Token; // kept, so that callers holding the uplink can still read it after disposal
        _frameWriter = null!; // set by the constructor that chose the transport
        _keepAlive = null!;
    }

    public UplinkSettings Settings { get; }

    /// <summary>The loop's wake for a body's copy loop, when the reader runs on a loop (<see cref="InboundReaderScheduler"/>); null otherwise.</summary>
    internal InboundReaderScheduler? InboundScheduler { get; }

    /// <summary>The options of its streams' inbound pipes: the shared ones, or with <see cref="InboundScheduler"/> on a loop.</summary>
    internal PipeOptions InboundPipeOptions { get; } = UplinkStream.InboundPipeOptions;

    internal FrameScheduler Scheduler => _scheduler;

    internal UplinkStreamPool StreamPool { get; }

    public UplinkRole Role { get; }

    /// <summary>A label for logs, e.g. the session and remote address.</summary>
    public string Name { get; }

    public bool IsOpen => Volatile.Read(ref _closeState) == 0;

    /// <summary>Open, and neither end has announced it is leaving.</summary>
    public bool AcceptsNewStreams => IsOpen && !_peerDraining && !_localDraining;

    /// <summary>Accepts new streams and carries fewer than the peer's limit: what a pick among replicas checks.</summary>
    public bool HasRoomForStream => AcceptsNewStreams && ActiveStreamCount < Settings.MaxConcurrentStreams;

    public int ActiveStreamCount => _streams.Count;

    /// <summary>
    /// Server side: whether the client says its backend is ready (its health probe passes). Starts as the login said;
    /// Health frames change it. A client without health probes is always ready.
    /// </summary>
    public bool PeerReady
    {
        get => _peerReady;
        init => _peerReady = value;
    }

    /// <summary>
    /// Client side: tells the server whether the backend is ready (a Health frame, protocol version 4). Returns false,
    /// sending nothing, when the server speaks an older version or the uplink is closed.
    /// </summary>
    public bool TrySendHealth(bool ready)
    {
        if (Role != UplinkRole.Client || Settings.ProtocolVersion < Handshake.HandshakeProtocol.HealthVersion || !IsOpen)
        {
            return false;
        }

        TryEnqueue(OutboundFrame.Health(ready));
        return true;
    }

    /// <summary>Cancelled when the uplink closes, for any reason.</summary>
    public CancellationToken Closed => _closedToken;

    public string? CloseReason => Volatile.Read(ref _closeReason);

    /// <summary>Runs the uplink until either side closes it or <paramref name="cancellationToken"/> fires.</summary>
    public async Task RunAsync(CancellationToken cancellationToken = default)
    {
        await using CancellationTokenRegistration registration =
            cancellationToken.Register(static state => ((Uplink)state!).Close("stopped locally"), this);
        Task writer = _writer = _frameWriter.RunAsync();
        Task keepAlive = _keepAlive.RunAsync(_closedToken);
        await (_loopTransport is null ? ReadLoopAsync() : ReadOnLoopAsync(_loopTransport)).ConfigureAwait(false);
        Close("peer closed the connection");

        // A closed uplink never waits on a frozen peer: the writer completes its output without flushing, and should
        // a transport ignore even that, the owner's disposal of the connection (after this returns) ends the write.
        if (await Task.WhenAny(writer, Task.Delay(WriterStopGrace, CancellationToken.None)).ConfigureAwait(false) != writer)
        {
            Log.WriterStuck(_logger, Name);
        }

        await keepAlive.ConfigureAwait(false);
    }

    /// <summary>
    /// Opens a stream for a new request and sends its head (server side). Ids are taken and heads queued under one
    /// lock, so the peer sees stream ids strictly increasing, which is how it tells a new stream from a finished one.
    /// A refusal is a status, not an exception: a full or closing uplink is an ordinary outcome under load, and an
    /// exception per refused request would cost more than the request itself.
    /// </summary>
    /// <param name="endStream">True when the request has no body.</param>
    /// <exception cref="InvalidOperationException">Called on a client-role uplink.</exception>
    public StreamOpenStatus TryOpenStream(RequestHead head, bool endStream, out IHttpExchange? exchange)
    {
        if (Role != UplinkRole.Server)
        {
            throw new InvalidOperationException("Only the server opens streams.");
        }

        exchange = null;
        var writer = new PooledBufferWriter();
        HeadCodec.WriteRequestHead(writer, head);
        byte[] pooled = writer.Detach(out int length);
        if (length > Settings.MaxFramePayload)
        {
            ArrayPool<byte>.Shared.Return(pooled);
            return StreamOpenStatus.HeadTooLarge;
        }

        StreamOpenStatus status = TryOpen(FrameType.RequestHead, endStream ? FrameFlags.EndStream : FrameFlags.None, pooled, length, tcp: null, out UplinkStream? stream);
        exchange = stream;
        return status;
    }

    /// <summary>
    /// Takes the next id and queues the stream's first frame (a request head, or a TcpOpen) under the open lock, so that
    /// the peer sees ids strictly increasing; a refusal gives the pooled payload back. Shared by HTTP and TCP streams.
    /// </summary>
    private StreamOpenStatus TryOpen(FrameType type, FrameFlags flags, byte[] pooled, int length, TcpStreamOpen? tcp, out UplinkStream? stream)
    {
        bool endStream = (flags & FrameFlags.EndStream) != 0;
        lock (_openLock)
        {
            if (!AcceptsNewStreams || ActiveStreamCount >= Settings.MaxConcurrentStreams)
            {
                ArrayPool<byte>.Shared.Return(pooled);
                stream = null;
                return AcceptsNewStreams ? StreamOpenStatus.AtStreamLimit : StreamOpenStatus.UplinkClosed;
            }

            uint id = _streams.LastStreamId + 1;
            stream = UplinkStream.Start(this, id, requestHead: null, localEnded: endStream, tcp: tcp);
            _streams.Add(stream);
            // A request without body is the whole step: it goes out after the lock, on this thread if the writer is idle.
            Enqueue(OutboundFrame.WithPooledPayload(type, flags, id, pooled, length), wake: !endStream);
        }

        if (endStream)
        {
            _frameWriter.SendNowOrWake();
        }

        if (!IsOpen)
        {
            stream.OnUplinkClosed(new UplinkClosedException(CloseReason ?? "The uplink closed."));
            stream.Dispose();
            stream = null;
            return StreamOpenStatus.UplinkClosed;
        }

        return StreamOpenStatus.Opened;
    }

    /// <summary>Closes the uplink at once; every open stream fails with <see cref="UplinkClosedException"/>.</summary>
    public void Close(string reason)
    {
        if (Interlocked.CompareExchange(ref _closeState, 1, 0) != 0)
        {
            return;
        }

        // A drain that ends by flushing and completing the writer makes the peer hang up first; the close is still the drain's.
        reason = Volatile.Read(ref _drainCloseReason) ?? reason;
        Volatile.Write(ref _closeReason, reason);
        Log.UplinkClosed(_logger, Name, reason, ActiveStreamCount);
        _scheduler.Complete();
        try
        {
            _transport?.Input.CancelPendingRead();
            _frameWriter.CancelPendingFlush();
        }
        catch (ObjectDisposedException)
        {
            // A loop already completed its end of the transport: there is nothing left to wake.
        }
        _streams.ForEach(
            static (stream, state) =>
            {
                try
                {
                    stream.OnUplinkClosed(state.Failure);
                }
                catch (Exception ex)
                {
                    Log.UnexpectedFailure(state.Uplink._logger, state.Uplink.Name, ex); // one stream's listener must not stop the others from hearing
                }
            },
            (Uplink: this, Failure: new UplinkClosedException($"Uplink closed: {reason}")));

        try
        {
            _closed.Cancel();
        }
        catch (AggregateException ex)
        {
            Log.UnexpectedFailure(_logger, Name, ex);
        }
    }

    /// <summary>Closes the uplink if it is still open and releases its wake-up signal and close token.</summary>
    public void Dispose()
    {
        Close("disposed");
        _loopTransport?.DisposeUnstarted();
        _scheduler.Dispose();
        _closed.Dispose();
    }

    /// <param name="wake">False when the caller then calls <see cref="SendNowOrWake"/> itself.</param>
    internal void Enqueue(in OutboundFrame frame, bool wake = true)
    {
        if (!_scheduler.TryEnqueueControl(frame, wake))
        {
            frame.ReturnBuffer();
            throw new UplinkClosedException(CloseReason ?? "The uplink closed.");
        }
    }

    /// <summary>
    /// After queuing the last frame of a step (<see cref="UplinkFrameWriter.SendNowOrWake"/>): sends on this thread when the
    /// writer is idle and the transport takes the bytes at once, else wakes the writer.
    /// </summary>
    internal void SendNowOrWake() => _frameWriter.SendNowOrWake();

    internal void TryEnqueue(in OutboundFrame frame)
    {
        if (!_scheduler.TryEnqueueControl(frame))
        {
            frame.ReturnBuffer();
        }
    }

    internal void RemoveStream(UplinkStream stream) => _streams.Remove(stream);

    /// <summary>The failures that mean the transport is gone (as opposed to a bug or a broken protocol).</summary>
    internal static bool IsTransportFailure(Exception ex) =>
        ex is IOException or ObjectDisposedException or OperationCanceledException or Microsoft.AspNetCore.Connections.ConnectionResetException;
}
