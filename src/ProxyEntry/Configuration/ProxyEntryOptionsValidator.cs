using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Handshake;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Configuration;

/// <summary>Checks what the annotations cannot: host names, the sessions they map to, balancing settings that go together, and each session's own entry.</summary>
public sealed class ProxyEntryOptionsValidator : IValidateOptions<ProxyEntryOptions>
{
    public ValidateOptionsResult Validate(string? name, ProxyEntryOptions options)
    {
        var failures = new List<string>();
        if (options.Routing.HostSuffix is { } suffix && !HostRouter.IsHostName(suffix))
        {
            failures.Add($"ProxyEntry:Routing:HostSuffix '{suffix}' is not a host name (e.g. tunnel.example.com).");
        }

        foreach (KeyValuePair<string, string> host in options.Routing.Hosts)
        {
            if (!HostRouter.IsHostName(host.Key))
            {
                failures.Add($"ProxyEntry:Routing:Hosts: '{host.Key}' is not a host name.");
            }

            if (!HandshakeProtocol.IsValidSessionId(host.Value))
            {
                failures.Add($"ProxyEntry:Routing:Hosts:{host.Key}: '{host.Value}' is not a session id.");
            }
        }

        foreach (string proxy in options.ParseTrustedProxies().Invalid)
        {
            failures.Add($"ProxyEntry:TrustedProxies: '{proxy}' is not an address or a network in CIDR form (e.g. 10.0.0.0/8, 127.0.0.1, fd00::/8).");
        }

        failures.AddRange(options.Balancing.Problems());
        failures.AddRange(SessionEntries.Problems(options.Balancing, options.Sessions));
        failures.AddRange(SessionEntries.HostClaims(options.Routing, options.Sessions));
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
