using System.Net;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Http1;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.TunnelServer.Security;

/// <summary>
/// The visitor rules a client declares for its session at login (<see cref="HandshakeProtocol.VisitorBasicHeader"/> and
/// the allow and deny headers), as ngrok's <c>--basic-auth</c> and <c>--cidr-allow</c> do. They apply on top of the
/// server's own rules for the session, never instead of them.
/// </summary>
public static class DeclaredVisitorPolicy
{
    /// <returns>True with a null policy when the login declares none; false with the reason when a header is malformed.</returns>
    public static bool TryRead(Http1Head head, string session, out VisitorPolicy? policy, out string? problem)
    {
        policy = null;
        problem = null;
        string? basic = head[HandshakeProtocol.VisitorBasicHeader];
        string? allow = head[HandshakeProtocol.VisitorAllowHeader];
        string? deny = head[HandshakeProtocol.VisitorDenyHeader];
        if (basic is null && allow is null && deny is null)
        {
            return true;
        }

        var users = new Dictionary<string, PasswordHash>(StringComparer.Ordinal);
        if (basic is not null)
        {
            int colon = basic.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0 || !PasswordHash.TryParse(basic[(colon + 1)..], out PasswordHash? hash))
            {
                problem = $"{HandshakeProtocol.VisitorBasicHeader} must be user:bcrypt-hash, of cost 04 to {PasswordHash.MaxWorkFactor}.";
                return false;
            }

            users[basic[..colon]] = hash!;
        }

        List<IPNetwork> allowed = [], denied = [];
        if ((allow is not null && !NetworkList.TryParse(allow, out allowed)) || (deny is not null && !NetworkList.TryParse(deny, out denied)))
        {
            problem = $"{HandshakeProtocol.VisitorAllowHeader} and {HandshakeProtocol.VisitorDenyHeader} are comma-separated networks in CIDR form.";
            return false;
        }

        if (!SessionPattern.TryParse(session, out SessionPattern? exact, out problem))
        {
            return false;
        }

        policy = new VisitorPolicy(exact!, users, [], allowed, denied);
        return true;
    }
}
