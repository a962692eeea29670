using System.Net;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>Checks what data annotations cannot in <c>TunnelServer:Tcp</c>: the port range and the bind address parse, the engine is one there is, and the ejection backoffs are in order.</summary>
public sealed class TcpServerOptionsValidator : IValidateOptions<TunnelServerOptions>
{
    public ValidateOptionsResult Validate(string? name, TunnelServerOptions options)
    {
        var failures = new List<string>();
        TcpServerOptions tcp = options.Tcp;
        if (!string.IsNullOrWhiteSpace(tcp.PortRange) && !TcpPortRange.TryParse(tcp.PortRange, out _, out string? error))
        {
            failures.Add($"TunnelServer:Tcp:PortRange: {error}.");
        }

        if (!IPAddress.TryParse(tcp.BindAddress, out _))
        {
            failures.Add($"TunnelServer:Tcp:BindAddress must be an IP address (0.0.0.0, ::, 127.0.0.1), not '{tcp.BindAddress}'.");
        }

        if (tcp.Engine is not (TcpServerOptions.EngineLoop or TcpServerOptions.EngineSockets))
        {
            failures.Add($"TunnelServer:Tcp:Engine must be '{TcpServerOptions.EngineLoop}' or '{TcpServerOptions.EngineSockets}', not '{tcp.Engine}'.");
        }

        if (tcp.Ejection().Problem is { } ejection)
        {
            failures.Add($"TunnelServer:Tcp:{ejection}.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
