namespace Tunnel2.TunnelClient.Configuration;

/// <summary>Visitor rules the client declares for its own session at login (section <c>TunnelClient:Visitors</c>); the server must allow them (<c>TunnelServer:ClientVisitorPolicies</c>). docs/security.md.</summary>
public sealed class VisitorRulesOptions
{
    /// <summary>
    /// <c>user:password</c>: visitors of this session must send it by basic auth. The client sends the server a bcrypt
    /// hash, never the password; the server must allow declared rules (<c>TunnelServer:ClientVisitorPolicies</c>).
    /// </summary>
    public string? BasicAuth { get; set; }

    /// <summary>Only visitors from these networks (comma-separated CIDR, IPv4 or IPv6) reach this session.</summary>
    public string? CidrAllow { get; set; }

    /// <summary>Visitors from these networks (comma-separated CIDR) get 403.</summary>
    public string? CidrDeny { get; set; }
}
