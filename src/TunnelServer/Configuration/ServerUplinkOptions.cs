using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>
/// Everything that shapes one uplink on the server (section <c>TunnelServer:Uplink</c>): the protocol settings sent to
/// the client at login, the wait for a response head, and the uplink sockets. docs/protocol.md §4 says what the windows bound.
/// </summary>
public sealed class ServerUplinkOptions
{
    /// <summary>The largest DATA frame payload either end sends, in bytes.</summary>
    [Range(16 * 1024, 16 * 1024 * 1024)]
    public int MaxFramePayload { get; set; } = UplinkSettings.DefaultMaxFramePayload;

    /// <summary>Body bytes a stream may send before the receiver grants more; every open stream can always get this much back.</summary>
    [Range(16 * 1024, int.MaxValue)]
    public int InitialStreamWindow { get; set; } = UplinkSettings.DefaultInitialStreamWindow;

    /// <summary>
    /// Beyond the initial window of each open stream, the most credit either end of an uplink grants over all its
    /// streams, so what one uplink makes either process buffer is at most this plus streams times the initial window.
    /// </summary>
    [Range(1024 * 1024, 1024 * 1024 * 1024)]
    public int ConnectionWindow { get; set; } = UplinkSettings.DefaultConnectionWindow;

    /// <summary>Streams open at once on one uplink; a request beyond it on every uplink of the session gets 503.</summary>
    [Range(1, 1_000_000)]
    public int MaxStreams { get; set; } = 10_000;

    /// <summary>How often an idle uplink is pinged.</summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan KeepAliveInterval { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>An uplink that answered no ping for this long is closed; longer than the interval.</summary>
    [TimeSpanRange("00:00:00.300", "01:00:00")]
    public TimeSpan KeepAliveTimeout { get; set; } = TimeSpan.FromSeconds(45);

    /// <summary>A public request whose response head has not come back over the uplink by then gets 504.</summary>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan ResponseHeadTimeout { get; set; } = TimeSpan.FromSeconds(100);

    /// <summary>
    /// SO_RCVBUF of each uplink socket (0 = the kernel's autotuning). Small enough that the uplink keeps working when the
    /// host runs short of TCP memory; it costs window per round trip on a long path, so a fast long-distance link may
    /// want more (docs/benchmarks/2026-11-24-storm.md).
    /// </summary>
    [Range(0, 64 * 1024 * 1024)]
    public int ReceiveBuffer { get; set; } = Tunnel2.Hosting.Sockets.UplinkReceiveBuffer.Default;

    /// <summary>
    /// TCP_MAXSEG of each uplink socket (0 = the path's own): only ever lowers it, so it matters only on loopback, where
    /// 64 KiB segments do not fit a socket's fair share of TCP memory once the host runs short of it.
    /// </summary>
    [ZeroOrRange(536, 65535)] // Linux refuses a TCP_MAXSEG below 88; 536 is the smallest MSS every IPv4 host must take
    public int SegmentSize { get; set; } = Tunnel2.Hosting.Sockets.UplinkSegmentSize.Default;

    /// <summary>
    /// How a plain-TCP uplink (a plain tunnel port, the upgrade transport) moves its frames: <c>Loop</c> (the default),
    /// on the server's one event loop with its TCP callers: the login's head is read as the loop finds it readable, and
    /// the loop reads and dispatches the frames and writes them in one gather send per turn (docs/protocol.md §9); Linux
    /// on x86-64 only, elsewhere Sockets is used. <c>Sockets</c>: a reader task and a writer task over the runtime's
    /// sockets, as before. An https:// tunnel port and WebSocket logins always use Sockets.
    /// </summary>
    [Required(ErrorMessage = "TunnelServer:Uplink:Engine must be 'Loop' or 'Sockets'.")]
    [RegularExpression("^(Loop|Sockets)$", ErrorMessage = "TunnelServer:Uplink:Engine must be 'Loop' or 'Sockets'.")]
    public string Engine { get; set; } = EngineLoop;

    /// <summary>
    /// How often the process's stream buffer pools, when nobody rented from them since the last look, let half of their
    /// free buffers go: what a crowd left in them (up to 64 MiB) goes back over a few periods once the process idles.
    /// </summary>
    [TimeSpanRange("00:00:00.100", "01:00:00")]
    public TimeSpan BufferTrimPeriod { get; set; } = Tunnel2.Protocol.Buffers.BufferPools.DefaultTrimPeriod;

    public const string EngineLoop = "Loop";

    public const string EngineSockets = "Sockets";

    public UplinkSettings ToUplinkSettings() => new()
    {
        MaxFramePayload = MaxFramePayload,
        InitialStreamWindow = InitialStreamWindow,
        ConnectionWindow = ConnectionWindow,
        MaxConcurrentStreams = MaxStreams,
        KeepAliveInterval = KeepAliveInterval,
        KeepAliveTimeout = KeepAliveTimeout,
        ResponseHeadTimeout = ResponseHeadTimeout,
    };
}
