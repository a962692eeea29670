using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>What <see cref="TcpSessions.Reserve"/> gives a TCP login: a lease on the session's port, or the refusal to send.</summary>
public readonly record struct TcpReservation(TcpLease? Lease, HandshakeRefusal? Refusal);
