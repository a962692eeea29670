using System.Net;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>
/// The address a login is judged and limited by. Usually the socket's peer; when that peer is a trusted proxy
/// (<c>ProxyEntry:TrustedProxies</c>, the same list the public port trusts for visitors), such as an edge that carries
/// the uplink's WebSocket transport, it is the first address in <c>X-Forwarded-For</c>, read from the right, that is not
/// a trusted proxy. Without this every client behind the edge would share the edge's failed-login count and uplink cap.
/// </summary>
public sealed class LoginPeer(IReadOnlyList<IPNetwork> trustedProxies)
{
    public bool TrustsProxies => trustedProxies.Count > 0;

    /// <returns>The login's address; null only when the socket is not IP.</returns>
    public IPAddress? Resolve(IPEndPoint? remote, Http1Head head)
    {
        IPAddress? peer = Normalize(remote?.Address);
        if (peer is null || !IsTrusted(peer))
        {
            return peer;
        }

        // Fields in wire order, each a comma list: the rightmost entry was added by the nearest proxy.
        List<Protocol.Heads.HeaderField> fields = head.Fields;
        for (int f = fields.Count - 1; f >= 0; f--)
        {
            if (!fields[f].Name.Equals("X-Forwarded-For", StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            string[] entries = fields[f].Value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
            for (int e = entries.Length - 1; e >= 0; e--)
            {
                if (!IPAddress.TryParse(entries[e], out IPAddress? hop))
                {
                    return peer; // a hop we cannot read: judge by the last address we could trust
                }

                peer = Normalize(hop)!;
                if (!IsTrusted(peer))
                {
                    return peer;
                }
            }
        }

        return peer;
    }

    private bool IsTrusted(IPAddress address)
    {
        foreach (IPNetwork network in trustedProxies)
        {
            if (network.Contains(address))
            {
                return true;
            }
        }

        return false;
    }

    private static IPAddress? Normalize(IPAddress? address) => address is { IsIPv4MappedToIPv6: true } ? address.MapToIPv4() : address;
}
