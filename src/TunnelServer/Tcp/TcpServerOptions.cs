using System.ComponentModel.DataAnnotations;
using Tunnel2.Hosting.Configuration;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// Raw TCP tunnels (section <c>TunnelServer:Tcp</c>, docs/tcp.md): a client that logs in with <c>--tcp</c> gets a public
/// TCP port for its session, from <see cref="PortRange"/> or the credentials file's <c>TcpPorts</c>. Off while neither
/// names a port.
/// </summary>
public sealed class TcpServerOptions
{
    /// <summary>Ports given to sessions that have none of their own, e.g. <c>20000-20100</c>. Empty: none (the default).</summary>
    public string? PortRange { get; set; }

    /// <summary>The address the sessions' TCP ports listen on; <c>::</c> takes IPv6 and IPv4 callers alike (dual stack).</summary>
    [Required]
    public string BindAddress { get; set; } = "0.0.0.0";

    /// <summary>TCP connections open at once per session; beyond that a new caller is closed at once.</summary>
    [Range(1, 1_000_000)]
    public int MaxConnectionsPerSession { get; set; } = 1000;

    /// <summary>A TCP connection that moved no byte either way for this long is closed (both sides).</summary>
    [TimeSpanRange("00:00:01", "7.00:00:00")]
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.FromMinutes(10);
}
