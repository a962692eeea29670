using System.Net;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelServer.Diagnostics;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// The tunnel port's log lines and metrics, for every acceptance layer. They keep one log category
/// (<see cref="UplinkAcceptor"/>'s), so that log filters set for the tunnel port cover all of its layers.
/// </summary>
public sealed class AcceptanceEvents(ILogger<UplinkAcceptor> logger, TunnelServerMetrics metrics)
{
    public void TlsHandshakeFailed(IPAddress? remote, string reason)
    {
        TunnelServerLog.TlsHandshakeFailed(logger, remote, reason);
        metrics.HandshakeRefused("tls-handshake-failed");
    }

    public void Refused(IPAddress? remote, int status, string reason)
    {
        TunnelServerLog.HandshakeRefused(logger, remote, status, reason);
        metrics.HandshakeRefused(reason);
    }

    public void SessionNotAllowed(IPAddress? remote, string credential, string session) =>
        TunnelServerLog.SessionNotAllowed(logger, remote, credential, session);

    public void Abandoned(IPAddress? remote, string reason) => TunnelServerLog.HandshakeAbandoned(logger, remote, reason);

    /// <param name="replaced">The uplink of the same instance this one replaced, if any.</param>
    public void Connected(string session, IPAddress? remote, int version, string transport, string? instance, Uplink? replaced)
    {
        metrics.UplinkConnected();
        TunnelServerLog.UplinkConnected(logger, session, remote, version, transport == "websocket" ? "WebSocket" : "an HTTP upgrade");
        if (replaced is not null)
        {
            TunnelServerLog.UplinkReplaced(logger, session, replaced.Name, instance!, ProxyEntry.Sessions.SessionRegistry.ReplacedReason);
        }
    }

    public void Disconnected(string session, IPAddress? remote, string reason)
    {
        metrics.UplinkDisconnected();
        TunnelServerLog.UplinkDisconnected(logger, session, remote, reason);
    }
}
