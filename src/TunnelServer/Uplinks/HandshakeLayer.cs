using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Tcp;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// The upgrade request and its answer: reads the head (<see cref="HandshakeReader"/>), decides on it with the
/// address's limits (<see cref="LoginAdmission"/>), and sends the 101 or the refusal (<see cref="HandshakeResponder"/>).
/// An accepted login goes on to the next layer and holds its place under the address's uplink cap until that ends.
/// </summary>
public sealed class HandshakeLayer(
    HandshakeReader reader, LoginPeer peers, LoginAdmission admission, HandshakeResponder responder, AcceptanceEvents events, SessionPolicies policies,
    TcpSessions? tcp = null)
{
    public async Task RunAsync(UplinkConnection connection, Func<UplinkConnection, Task> next)
    {
        // Zero-byte reads: an idle uplink (the usual state of most of them) then holds no 64 KiB read buffer while it
        // waits; that buffer was most of an idle session's memory (docs/benchmarks/2026-11-23-idle-sessions.md).
        // SslStream passes a zero-byte read down to the socket once its own buffer is empty.
        connection.Transport = DuplexPipe.Over(connection.Stream, zeroByteReads: true);
        HandshakeAcceptance? accepted = await AcceptAsync(connection);
        if (accepted is null)
        {
            return;
        }

        connection.Accepted = accepted;
        policies.Declare(accepted.Session, accepted.DeclaredPolicy); // the session's policy rebuilt with them (or without, when none)
        try
        {
            await next(connection);
        }
        finally
        {
            connection.TcpLease?.Dispose();
            admission.Release(connection.Peer);
        }
    }

    /// <returns>The accepted login, with its 101 sent; null when the connection was refused, timed out or went away.</returns>
    private async Task<HandshakeAcceptance?> AcceptAsync(UplinkConnection connection)
    {
        using CancellationTokenSource deadline = reader.StartDeadline(connection.Stopping);
        HeadRead read = await reader.ReadAsync(connection.Transport.Input, deadline.Token, connection.Stopping);
        if (read.Head is not { } head)
        {
            return await EndAsync(connection, read, HandshakeProtocol.Path);
        }

        string instance = head.StartLine.Split(' ') is [_, string target, ..] ? target : HandshakeProtocol.Path;
        connection.Peer = peers.Resolve(connection.Remote, head);
        (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = admission.Decide(head, connection.Peer);
        if (accepted is null)
        {
            if (refused!.OutsideCredential is var (credential, session))
            {
                events.SessionNotAllowed(connection.Peer, credential, session);
            }

            return await EndAsync(connection, HeadRead.Refused(refused), instance);
        }

        if (accepted.Tcp && tcp is not null)
        {
            TcpReservation reservation = tcp.Reserve(accepted.Session, accepted.TcpPort);
            if (reservation.Refusal is { } tcpRefused)
            {
                admission.Release(connection.Peer); // admitted, but this login never became an uplink
                return await EndAsync(connection, HeadRead.Refused(tcpRefused), instance);
            }

            connection.TcpLease = reservation.Lease;
        }

        try
        {
            await responder.SwitchProtocolsAsync(connection.Transport.Output, accepted, head["Host"], deadline.Token, connection.TcpLease?.AddressFor(head["Host"]));
            return accepted;
        }
        catch (Exception ex)
        {
            connection.TcpLease?.Dispose();
            connection.TcpLease = null;
            admission.Release(connection.Peer); // admitted, but this login never became an uplink
            if (!HandshakeReader.IsHandshakeFailure(ex))
            {
                throw;
            }

            return await EndAsync(connection, reader.Failed(ex, connection.Stopping), instance);
        }
    }

    /// <summary>Ends a handshake that did not succeed: refused (logged, answered, closed), abandoned (logged) or a port probe.</summary>
    private async Task<HandshakeAcceptance?> EndAsync(UplinkConnection connection, HeadRead read, string instance)
    {
        if (read.Refusal is { } refusal)
        {
            events.Refused(connection.Peer, refusal.Status, refusal.Reason);
            await HandshakeResponder.RefuseAndCloseAsync(connection.Socket, connection.Transport, refusal, instance);
        }
        else if (read.Abandoned is { } reason)
        {
            events.Abandoned(connection.Peer, reason);
        }

        return null; // with neither: connected and closed without a word, a port probe
    }
}
