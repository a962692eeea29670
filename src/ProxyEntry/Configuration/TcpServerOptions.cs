using System.ComponentModel.DataAnnotations;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Health;
using Tunnel2.Hosting.Configuration;

namespace Tunnel2.ProxyEntry.Configuration;

/// <summary>
/// Raw TCP tunnels (section <c>TunnelServer:Tcp</c>, docs/tcp.md): a client that logs in with <c>--tcp</c> gets a public
/// TCP port for its session, from <see cref="PortRange"/> or the credentials file's <c>TcpPorts</c>. Off while neither
/// names a port.
/// </summary>
public sealed class TcpServerOptions
{
    /// <summary>The callers relayed on an event loop of the server's own (issue 52, stage 2b).</summary>
    public const string EngineLoop = "Loop";

    /// <summary>The callers relayed on the runtime's sockets, a task pair per caller.</summary>
    public const string EngineSockets = "Sockets";

    /// <summary>Ports given to sessions that have none of their own, e.g. <c>20000-20100</c>. Empty: none (the default).</summary>
    public string? PortRange { get; set; }

    /// <summary>The address the sessions' TCP ports listen on; <c>::</c> takes IPv6 and IPv4 callers alike (dual stack).</summary>
    [Required]
    public string BindAddress { get; set; } = "0.0.0.0";

    /// <summary>A TCP connection that moved no byte either way for this long is closed (both sides).</summary>
    [TimeSpanRange("00:00:01", "7.00:00:00")]
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>
    /// How a session's TCP connections spread over its clients, apart from its HTTP requests (<c>ProxyEntry:Balancing</c>).
    /// Under <c>LeastRequests</c> a client's load is its TCP connections open on the port, not its uplink's streams.
    /// </summary>
    public BalancingStrategy Strategy { get; set; } = BalancingStrategy.RoundRobin;

    /// <summary>
    /// After this many connections in a row whose target a client could not reach (refused, or no answer within the
    /// client's connect timeout), that client is passed over for <see cref="EjectionBackoff"/>, doubled on each
    /// ejection that follows without a connection between, up to <see cref="MaxEjectionBackoff"/>. 0 turns passive
    /// ejection off.
    /// </summary>
    [Range(0, 1000)]
    public int EjectAfter { get; set; } = 1;

    /// <summary>How long a client whose target refused is first passed over.</summary>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan EjectionBackoff { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The longest a client whose target keeps refusing is passed over.</summary>
    [TimeSpanRange("00:00:00.010", "01:00:00")]
    public TimeSpan MaxEjectionBackoff { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// What relays the callers' bytes: <c>Loop</c>, one event-loop thread of the server's own (Linux x86-64; elsewhere,
    /// or when the loop cannot start, the runtime's sockets, logged once), or <c>Sockets</c>, the runtime's sockets.
    /// </summary>
    public string Engine { get; set; } = EngineLoop;

    /// <summary>The ejection settings as the balancing library takes them.</summary>
    public EjectionOptions Ejection() => new(EjectAfter, EjectionBackoff, MaxEjectionBackoff);
}
