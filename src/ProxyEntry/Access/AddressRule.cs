using System.Net;
using Microsoft.Extensions.Configuration;
using Tunnel2.Protocol.Handshake;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>
/// CIDR allow and deny lists (IPv4 and IPv6): the deny list first, then the allow list if it has entries. The one rule
/// a raw TCP caller is checked against too. File: <c>"Allow": [ "10.0.0.0/8" ], "Deny": [ "10.9.9.9/32" ]</c>; login:
/// <see cref="HandshakeProtocol.VisitorAllowHeader"/> and <see cref="HandshakeProtocol.VisitorDenyHeader"/>.
/// </summary>
public sealed class AddressRule(IReadOnlyList<IPNetwork> allow, IReadOnlyList<IPNetwork> deny) : IVisitorRule
{
    public static readonly VisitorRuleKind Kind = new("cidr", FromFile, FromLogin);

    public IReadOnlyList<IPNetwork> Allow { get; } = allow;

    public IReadOnlyList<IPNetwork> Deny { get; } = deny;

    string IVisitorRule.Kind => Kind.Name;

    public bool WantsCredentials => false;

    public bool AllowsAddress(IPAddress? remote)
    {
        if (Allow.Count == 0 && Deny.Count == 0)
        {
            return true;
        }

        if (remote is null)
        {
            return false;
        }

        IPAddress address = remote.IsIPv4MappedToIPv6 ? remote.MapToIPv4() : remote;
        return !Contains(Deny, address) && (Allow.Count == 0 || Contains(Allow, address));
    }

    private static bool Contains(IReadOnlyList<IPNetwork> networks, IPAddress address)
    {
        for (int i = 0; i < networks.Count; i++)
        {
            if (networks[i].Contains(address))
            {
                return true;
            }
        }

        return false;
    }

    private static AddressRule? FromFile(IConfigurationSection entry, string where, List<string> problems)
    {
        List<IPNetwork> allow = Networks(entry.GetSection("Allow"), where, problems), deny = Networks(entry.GetSection("Deny"), where, problems);
        return allow.Count == 0 && deny.Count == 0 ? null : new AddressRule(allow, deny);
    }

    private static AddressRule? FromLogin(Func<string, string?> header, List<string> problems)
    {
        string? allow = header(HandshakeProtocol.VisitorAllowHeader), deny = header(HandshakeProtocol.VisitorDenyHeader);
        if (allow is null && deny is null)
        {
            return null;
        }

        List<IPNetwork> allowed = [], denied = [];
        if ((allow is not null && !NetworkList.TryParse(allow, out allowed)) || (deny is not null && !NetworkList.TryParse(deny, out denied)))
        {
            problems.Add($"{HandshakeProtocol.VisitorAllowHeader} and {HandshakeProtocol.VisitorDenyHeader} are comma-separated networks in CIDR form.");
            return null;
        }

        return new AddressRule(allowed, denied);
    }

    private static List<IPNetwork> Networks(IConfigurationSection section, string where, List<string> problems)
    {
        var networks = new List<IPNetwork>();
        foreach (IConfigurationSection item in section.GetChildren())
        {
            if (NetworkList.TryParseNetwork(item.Value, out IPNetwork network))
            {
                networks.Add(network);
            }
            else
            {
                problems.Add($"{where}: {section.Key}: '{item.Value}' is not an address or a network in CIDR form (10.0.0.0/8, 2001:db8::/32).");
            }
        }

        return networks;
    }
}
