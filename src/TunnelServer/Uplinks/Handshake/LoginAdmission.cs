using System.Net;
using Tunnel2.Protocol.Http1;
using Tunnel2.ProxyEntry.Draining;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>
/// Whether a login is let in: the (cheap, synchronous) decision on its head first, then its address's limits. An
/// admitted login holds a place under its address's uplink cap until <see cref="Release"/>.
/// </summary>
public sealed class LoginAdmission(LoginDecision decision, AddressGuard guard, PublicDrain drain)
{
    /// <param name="peer">The login's address (<see cref="LoginPeer"/>); null (no address to limit) only for sockets that are not IP.</param>
    public (HandshakeAcceptance? Accepted, HandshakeRefusal? Refused) Decide(Http1Head head, IPAddress? peer)
    {
        (HandshakeAcceptance? Accepted, HandshakeRefusal? Refused) decided = decision.Decide(head, drain.IsDraining);
        return peer is null ? decided : guard.Admit(peer, decided);
    }

    /// <summary>Gives back an admitted login's place under its address's uplink cap.</summary>
    public void Release(IPAddress? peer)
    {
        if (peer is not null)
        {
            guard.RemoveUplink(peer);
        }
    }
}
