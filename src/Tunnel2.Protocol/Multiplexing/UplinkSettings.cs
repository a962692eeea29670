namespace Tunnel2.Protocol.Multiplexing;

/// <summary>The limits both ends of one uplink agree on in the handshake, plus this end's liveness timers.</summary>
public sealed record UplinkSettings
{
    public const int DefaultMaxFramePayload = 256 * 1024;
    public const int DefaultInitialStreamWindow = 16 * 1024;
    public const int DefaultConnectionWindow = 16 * 1024 * 1024;
    public const int DefaultMaxStreamWindow = 1024 * 1024;
    public const int DefaultQueuedDataLimit = 16 * 1024 * 1024;

    /// <summary>The protocol version the handshake settled on (<see cref="Handshake.HandshakeProtocol.SupportedVersions"/>).</summary>
    public int ProtocolVersion { get; init; } = Handshake.HandshakeProtocol.CurrentVersion;

    /// <summary>The largest payload of one frame; a bigger frame is a protocol error.</summary>
    public int MaxFramePayload { get; init; } = DefaultMaxFramePayload;

    /// <summary>
    /// Bytes of body a sender may send on a new stream before the receiver grants more. Every open stream can always get
    /// this much credit back, whatever the others hold, so no stream is starved by the connection budget.
    /// </summary>
    public int InitialStreamWindow { get; init; } = DefaultInitialStreamWindow;

    /// <summary>
    /// Negotiated (protocol version 2): beyond <see cref="InitialStreamWindow"/> per open stream, the most credit a receiver
    /// has granted over all streams and not yet received. What one uplink makes either end buffer is therefore at most
    /// <c>ConnectionWindow + open streams × InitialStreamWindow</c>, however many streams are slow.
    /// </summary>
    public int ConnectionWindow { get; init; } = DefaultConnectionWindow;

    /// <summary>
    /// This end's own policy: the most credit it grants one stream, reached when few streams are open (each stream's
    /// share is <see cref="ConnectionWindow"/> divided by the open streams, between the initial window and this).
    /// </summary>
    public int MaxStreamWindow { get; init; } = DefaultMaxStreamWindow;

    /// <summary>
    /// This end's own policy: the most body bytes read from a source (the client's backend sockets) and queued for the
    /// writer at once, over all streams (<see cref="QueuedDataBudget"/>). Beyond it a read waits its turn even with credit
    /// in hand, so a crowd whose callers the uplink cannot serve as fast as their windows allow leaves its bytes in the
    /// backend's sockets. 16 MiB, the size of the connection window: a tighter 4 MiB also cost delivery under a crowd, since
    /// the writer ran dry while admitted streams woke up (docs/benchmarks/2026-11-24-storm.md). 0: no limit.
    /// </summary>
    public int QueuedDataLimit { get; init; } = DefaultQueuedDataLimit;

    /// <summary>
    /// This end's own policy: finished stream objects one uplink keeps for the next exchanges
    /// (<see cref="UplinkStreamPool"/>); 0 keeps none.
    /// </summary>
    public int StreamPoolSize { get; init; } = UplinkStreamPool.DefaultCapacity;

    /// <summary>
    /// This end's own policy: how many whole small exchanges of one batch of frames the uplink's reader starts on its own
    /// thread, without a thread-pool hand-off (server: answers, whose callers' continuations run there; client: requests
    /// without body that are the batch's last frame, <see cref="UplinkStream.MayStartOnReader"/>); the others go to the
    /// thread pool, so under load they still spread over the cores. 0: none.
    /// </summary>
    public int InlineAnswersPerBatch { get; init; } = 1;

    /// <summary>
    /// This end's own policy: the writer sends the last frame of a step on the thread that queued it (instead of waking
    /// its loop, which batches) only while at most this many streams are open, the load at which no batch would form.
    /// 0: never.
    /// </summary>
    public int InlineSendMaxStreams { get; init; } = 2;

    /// <summary>Most streams open at once on one uplink.</summary>
    public int MaxConcurrentStreams { get; init; } = 10_000;

    /// <summary>How often a Ping is sent when the uplink is otherwise quiet.</summary>
    public TimeSpan KeepAliveInterval { get; init; } = TimeSpan.FromSeconds(15);

    /// <summary>An uplink from which nothing arrives for this long is declared dead.</summary>
    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromSeconds(45);

    /// <summary>
    /// Server side: a stream whose response head has not arrived this long after it was opened is reset with
    /// <see cref="Frames.ProtocolErrorCode.ResponseHeadTimeout"/> (its reader sees that code). Checked on the uplink's
    /// tick rather than by a timer per request, so it fires up to a quarter of the timeout late (at least 50 ms).
    /// Null: no limit. Local policy, not negotiated.
    /// </summary>
    public TimeSpan? ResponseHeadTimeout { get; init; }

    /// <summary>
    /// Largest Data frame a sender cuts body bytes into (bounded by <see cref="MaxFramePayload"/>): fewer, larger frames
    /// mean fewer wake-ups of every thread along a bulk transfer (256 KiB frames together with the server's 32 KiB
    /// receive blocks: 1.5x the download speed of 64 KiB frames, docs/benchmarks/2026-11-23-performance.md). Small
    /// bodies still go out in one frame of their own size.
    /// </summary>
    public int DataChunkSize => Math.Min(MaxFramePayload, 256 * 1024);
}
