using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>The uplinks to the server (section <c>TunnelClient:Uplink</c>): how many, how they are carried and kept alive, how they reconnect, and their sockets (docs/protocol.md §4).</summary>
public sealed class ClientUplinkOptions
{
    /// <summary>
    /// Uplink connections this client keeps to the server, each logged in on its own and all serving the session; the
    /// server spreads the session's streams over them. More than one keeps a crowd of streams from resting on one TCP
    /// connection, which the kernel squeezes to a fair share when the host runs short of TCP memory.
    /// </summary>
    [Range(1, 16)]
    public int Count { get; set; } = 1;

    /// <summary>
    /// How the uplink is carried: <c>upgrade</c> (an HTTP/1.1 upgrade to raw frames, the default and the cheaper) or
    /// <c>websocket</c> (the same frames in WebSocket binary messages, for proxies that pass only WebSocket upgrades).
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Uplink:Transport must be 'upgrade' or 'websocket'.")]
    [RegularExpression("^(upgrade|websocket)$", ErrorMessage = "TunnelClient:Uplink:Transport must be 'upgrade' or 'websocket'.")]
    public string Transport { get; set; } = UpgradeTransport;

    /// <summary>
    /// A cluster behind one name: with an interval here, each server given by a host name is resolved that often and the
    /// client keeps <see cref="Count"/> uplinks to every address the name has, so nodes can be added and removed in
    /// DNS; the uplinks of an address that is gone drain and close. Zero (the default): the name is dialled as one server.
    /// </summary>
    [TimeSpanRange("00:00:00", "01:00:00")]
    public TimeSpan ResolveInterval { get; set; }

    /// <summary>The first wait before an uplink that dropped dials again; doubled after each failure, up to the longest.</summary>
    [TimeSpanRange("00:00:00.010", "00:10:00")]
    public TimeSpan ReconnectMinDelay { get; set; } = TimeSpan.FromMilliseconds(250);

    /// <summary>The longest wait between two attempts to dial the server again.</summary>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan ReconnectMaxDelay { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>How often an idle uplink is pinged.</summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan KeepAliveInterval { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>An uplink that answered no ping for this long is closed and dialled again; longer than the interval.</summary>
    [TimeSpanRange("00:00:00.300", "01:00:00")]
    public TimeSpan KeepAliveTimeout { get; set; } = TimeSpan.FromSeconds(45);

    /// <summary>
    /// TCP_NOTSENT_LOWAT on the uplink and backend sockets: the most bytes each keeps queued unsent (0 = the system's
    /// default, unbounded up to tcp_wmem). Bounds the kernel memory a crowd of slow streams parks on this host.
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int UnsentBytesLimit { get; set; } = Tunnel2.Hosting.Sockets.UnsentBytesLimit.Default;

    /// <summary>
    /// SO_RCVBUF of the uplink socket (0 = the kernel's autotuning; the upgrade transport only). Small enough that the
    /// uplink keeps working when the host runs short of TCP memory; a long, fast path may want more.
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int ReceiveBuffer { get; set; } = Tunnel2.Hosting.Sockets.UplinkReceiveBuffer.Default;

    /// <summary>TCP_MAXSEG of the uplink socket (0 = the path's own; the upgrade transport only), as the server's setting of that name.</summary>
    [ZeroOrRange(536, 65535)] // Linux refuses a TCP_MAXSEG below 88; 536 is the smallest MSS every IPv4 host must take
    public int SegmentSize { get; set; } = Tunnel2.Hosting.Sockets.UplinkSegmentSize.Default;

    /// <summary>
    /// The most response-body bytes read from backends and waiting for the uplink's writer at once, over all streams of
    /// one uplink (0 = no bound beyond the flow-control windows). When the uplink cannot send as fast as the callers'
    /// windows allow, further reads wait their turn and the bytes stay in the backend sockets instead of this process.
    /// </summary>
    [Range(0, 1024 * 1024 * 1024)]
    public int QueuedDataLimit { get; set; } = UplinkSettings.DefaultQueuedDataLimit;

    /// <summary>
    /// How a plain-TCP uplink (the upgrade transport, no TLS) moves its frames: <c>Loop</c> (the default), on the
    /// client's one event loop with its TCP targets, which reads and dispatches the frames and writes them in one gather
    /// send per turn (docs/protocol.md §9); Linux on x86-64 only, elsewhere Sockets is used. <c>Sockets</c>: a reader
    /// task and a writer task over the runtime's sockets, as before. TLS and WebSocket uplinks always use Sockets.
    /// </summary>
    [Required(ErrorMessage = "TunnelClient:Uplink:Engine must be 'Loop' or 'Sockets'.")]
    [RegularExpression("^(Loop|Sockets)$", ErrorMessage = "TunnelClient:Uplink:Engine must be 'Loop' or 'Sockets'.")]
    public string Engine { get; set; } = EngineLoop;

    /// <summary>
    /// How often the process's stream buffer pools, when nobody rented from them since the last look, let half of their
    /// free buffers go: what a crowd left in them (up to 64 MiB) goes back over a few periods once the process idles.
    /// </summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan BufferTrimPeriod { get; set; } = Tunnel2.Protocol.Buffers.BufferPools.DefaultTrimPeriod;

    public const string UpgradeTransport = "upgrade";

    public const string WebSocketTransport = "websocket";

    public const string EngineLoop = "Loop";

    public const string EngineSockets = "Sockets";
}
