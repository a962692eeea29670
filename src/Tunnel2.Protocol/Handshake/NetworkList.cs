using System.Net;
using System.Net.Sockets;

namespace Tunnel2.Protocol.Handshake;

/// <summary>
/// Networks as visitor rules and trusted proxies write them: CIDR (<c>10.0.0.0/8</c>, <c>2001:db8::/32</c>) or one
/// address (<c>192.0.2.7</c>), and lists of them separated by commas (the <see cref="HandshakeProtocol.VisitorAllowHeader"/>
/// and <see cref="HandshakeProtocol.VisitorDenyHeader"/> values, the client's <c>--cidr-allow</c>).
/// </summary>
public static class NetworkList
{
    public static bool TryParseNetwork(ReadOnlySpan<char> text, out IPNetwork network)
    {
        if (IPNetwork.TryParse(text, out network))
        {
            return true;
        }

        if (IPAddress.TryParse(text, out IPAddress? single))
        {
            network = new IPNetwork(single, single.AddressFamily == AddressFamily.InterNetwork ? 32 : 128);
            return true;
        }

        return false;
    }

    /// <returns>False when the list is empty or an item is not a network.</returns>
    public static bool TryParse(string list, out List<IPNetwork> networks)
    {
        networks = [];
        foreach (Range part in list.AsSpan().Split(','))
        {
            if (!TryParseNetwork(list.AsSpan()[part].Trim(), out IPNetwork network))
            {
                return false;
            }

            networks.Add(network);
        }

        return networks.Count > 0;
    }
}
