using System.Net;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// Where one uplink goes: a server of <see cref="Configuration.TunnelClientOptions.Server"/>, and for a name resolved into
/// a cluster's nodes, the one address of it this uplink dials (the name still goes in the TLS handshake and the Host header).
/// </summary>
public sealed record UplinkTarget(Uri Server, IPAddress? Address = null)
{
    /// <summary>For logs and the <c>server</c> tag of the uplink metrics: the server, and the node's address when resolved.</summary>
    public string Label { get; } = Address is null ? Server.Authority : $"{Server.Authority}@{new IPEndPoint(Address, Server.Port)}";
}
