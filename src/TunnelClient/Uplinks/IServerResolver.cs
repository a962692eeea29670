using System.Net;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>Finds the addresses of a server's host name (<see cref="Configuration.ClientUplinkOptions.ResolveInterval"/>).</summary>
public interface IServerResolver
{
    Task<IPAddress[]> ResolveAsync(string host, CancellationToken cancellationToken);
}

/// <summary>The system's resolver (DNS, /etc/hosts).</summary>
public sealed class DnsServerResolver : IServerResolver
{
    public Task<IPAddress[]> ResolveAsync(string host, CancellationToken cancellationToken) =>
        Dns.GetHostAddressesAsync(host, cancellationToken);
}
