using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// The last layer: runs the <see cref="Uplink"/> over the connection's transport, registered for its session (and
/// known to <see cref="CredentialRevocation"/>) until it closes.
/// </summary>
public sealed class UplinkRegistration(
    UplinkSettings settings, SessionRegistry registry, CredentialRevocation revocation, AcceptanceEvents events, ILoggerFactory loggerFactory)
{
    public async Task RunAsync(UplinkConnection connection)
    {
        HandshakeAcceptance accepted = connection.Accepted;
        string transportName = accepted.IsWebSocket ? "websocket" : "upgrade";
        using Uplink uplink = connection.Loop is { } loop
            ? await OnLoopAsync(connection, loop, accepted)
            : new Uplink(connection.Transport, settings with { ProtocolVersion = accepted.Version }, UplinkRole.Server,
                loggerFactory.CreateLogger<Uplink>(), name: NameOf(connection, accepted))
            {
                PeerReady = accepted.Ready,
            };

        Uplink? replaced = registry.Register(accepted.Session, uplink, accepted.Instance, accepted.Weight, connection.Remote?.ToString(), transportName);
        revocation.LoggedIn(uplink, accepted.Session, accepted.Login);
        connection.TcpLease?.Attach(uplink, accepted.Weight); // detached when HandshakeLayer ends the lease, after this returns
        events.Connected(accepted.Session, connection.Peer, accepted.Version, transportName, accepted.Instance, replaced);
        try
        {
            // Shutdown does not cut the uplink: the drain (GracefulShutdown) closes it after its streams finish, and the
            // reader sees the end of the connection itself, so a frame cut short by the peer is reported as the protocol
            // error it is rather than as a local stop.
            await uplink.RunAsync(CancellationToken.None);
        }
        finally
        {
            registry.Unregister(accepted.Session, uplink);
            revocation.LoggedOut(uplink);
            events.Disconnected(accepted.Session, connection.Peer, uplink.CloseReason ?? "closed");
        }
    }

    private static string NameOf(UplinkConnection connection, HandshakeAcceptance accepted) =>
        $"{accepted.Session}@{connection.Remote}{(accepted.IsWebSocket ? " (websocket)" : string.Empty)}";

    /// <summary>
    /// The uplink on the server's loop, which takes the socket (and closes it): what the handshake's pipe read past the
    /// head is the frame parser's first bytes; the pipe itself, and its buffer, go.
    /// </summary>
    private async Task<Uplink> OnLoopAsync(UplinkConnection connection, Loops.EventLoop loop, HandshakeAcceptance accepted)
    {
        byte[] early = [];
        if (connection.Transport.Input.TryRead(out System.IO.Pipelines.ReadResult read))
        {
            early = System.Buffers.BuffersExtensions.ToArray(read.Buffer);
            connection.Transport.Input.AdvanceTo(read.Buffer.End);
        }

        await connection.Transport.Input.CompleteAsync();
        await connection.Transport.Output.CompleteAsync();
        connection.SocketHandedOver = true;
        return Uplink.ServerOnLoop(loop, connection.Socket, early, settings with { ProtocolVersion = accepted.Version },
            loggerFactory.CreateLogger<Uplink>(), NameOf(connection, accepted), accepted.Ready);
    }
}
