namespace Tunnel2.ProxyEntry.Diagnostics;

/// <summary>
/// The host's meter name, the one source of it. It is declared here, below the host, because two assemblies count on
/// that meter: TunnelServer's own instruments (<c>TunnelServerMetrics</c>) and the TCP door's (<c>ProxyEntry.Tcp.TcpMetrics</c>).
/// </summary>
public static class ServerMeter
{
    public const string Name = "Tunnel2.TunnelServer";
}
