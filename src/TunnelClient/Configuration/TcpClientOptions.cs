using Tunnel2.Hosting.Configuration;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>
/// Raw TCP (section <c>TunnelClient:Tcp</c>, docs/tcp.md): with a <see cref="Target"/> the client asks the server for a
/// public TCP port for its session at login, and dials the target once per connection to that port.
/// </summary>
public sealed class TcpClientOptions
{
    public const string ProxyProtocolOff = "off";

    public const string ProxyProtocolV2 = "v2";

    public const string EngineLoop = "Loop";

    public const string EngineSockets = "Sockets";

    /// <summary><c>host:port</c> (or a port, for 127.0.0.1) of the TCP service to expose (<c>--tcp</c>). Null: no TCP.</summary>
    public string? Target { get; set; }

    /// <summary>
    /// <c>v2</c>: each connection to the target starts with a PROXY protocol v2 header naming the caller and the public
    /// port, so the target sees the caller's address (it must expect the header). <c>off</c> (the default): raw bytes only.
    /// </summary>
    public string ProxyProtocol { get; set; } = ProxyProtocolOff;

    /// <summary>A target that does not take the connection within this is given up on; the caller is cut.</summary>
    [TimeSpanRange("00:00:00.100", "00:10:00")]
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How connections to the target move their bytes. <c>Loop</c> (the default): on one event loop thread of the client's
    /// own (epoll, docs/protocol.md §9), the caller's bytes sent to the target straight from the uplink's buffer; Linux on
    /// x86-64 only, elsewhere <c>Sockets</c> is used. <c>Sockets</c>: the runtime's sockets and thread pool, as before.
    /// </summary>
    public string Engine { get; set; } = EngineLoop;

    /// <summary>
    /// Whether this client also relays HTTP: true unless <see cref="Target"/> is given without a backend (<c>--tcp</c>
    /// instead of <c>--backend</c>). Set at start from the configuration, not bound.
    /// </summary>
    public bool ServesHttp { get; internal set; } = true;
}
