using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>Checks <c>TunnelClient:Tcp</c>: the target parses and the PROXY protocol setting is known.</summary>
public sealed class TcpClientOptionsValidator : IValidateOptions<TunnelClientOptions>
{
    public ValidateOptionsResult Validate(string? name, TunnelClientOptions options)
    {
        var failures = new List<string>();
        TcpClientOptions tcp = options.Tcp;
        if (tcp.Target is not null && TcpTarget.Parse(tcp.Target, out string? error) is null)
        {
            failures.Add($"TunnelClient:Tcp:Target (--tcp): {error}.");
        }

        if (tcp.ProxyProtocol is not (TcpClientOptions.ProxyProtocolOff or TcpClientOptions.ProxyProtocolV2))
        {
            failures.Add($"TunnelClient:Tcp:ProxyProtocol (--tcp-proxy-protocol) must be '{TcpClientOptions.ProxyProtocolOff}' or '{TcpClientOptions.ProxyProtocolV2}', not '{tcp.ProxyProtocol}'.");
        }

        if (tcp.Engine is not (TcpClientOptions.EngineLoop or TcpClientOptions.EngineSockets))
        {
            failures.Add($"TunnelClient:Tcp:Engine must be '{TcpClientOptions.EngineLoop}' or '{TcpClientOptions.EngineSockets}', not '{tcp.Engine}'.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
