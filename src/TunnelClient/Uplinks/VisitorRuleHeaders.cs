using Tunnel2.Protocol.Handshake;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// The login headers that declare this client's visitor rules (<c>--basic-auth</c>, <c>--cidr-allow</c>,
/// <c>--cidr-deny</c>). Made once: the password's bcrypt hash (cost 10) takes tens of milliseconds, and every uplink
/// sends the same rules.
/// </summary>
public static class VisitorRuleHeaders
{
    public const int WorkFactor = 10;

    public static KeyValuePair<string, string>[] From(TunnelClientOptions options)
    {
        var headers = new List<KeyValuePair<string, string>>(3);
        if (options.Visitors.BasicAuth is { } basic)
        {
            int colon = basic.IndexOf(':', StringComparison.Ordinal);
            headers.Add(new(HandshakeProtocol.VisitorBasicHeader, basic[..colon] + ":" + BCrypt.Net.BCrypt.HashPassword(basic[(colon + 1)..], WorkFactor)));
        }

        if (!string.IsNullOrWhiteSpace(options.Visitors.CidrAllow))
        {
            headers.Add(new(HandshakeProtocol.VisitorAllowHeader, options.Visitors.CidrAllow));
        }

        if (!string.IsNullOrWhiteSpace(options.Visitors.CidrDeny))
        {
            headers.Add(new(HandshakeProtocol.VisitorDenyHeader, options.Visitors.CidrDeny));
        }

        return [.. headers];
    }
}
