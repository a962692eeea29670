using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.Loops;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.TunnelServer.Uplinks.OnLoop;

/// <summary>
/// Whether the tunnel port's logins go to the server's loop (<c>TunnelServer:Uplink:Engine</c> = <c>Loop</c>): only on a
/// plain port, known at start from the tunnel URL's scheme (TLS stays on the runtime's <see cref="System.Net.Security.SslStream"/>),
/// and only where the loop runs. A WebSocket login is known only once its head is read: it leaves the loop then.
/// </summary>
public sealed class LoopUplinks(IOptions<TunnelServerOptions> options, ServerLoop loop)
{
    private readonly bool _chosen = options.Value.Uplink.Engine == ServerUplinkOptions.EngineLoop && EventLoop.IsSupported
        && ListenAddress.TryParse(options.Value.Listeners.TunnelUrl, out ListenAddress? address, out _) && !address.IsHttps;

    /// <summary>The loop a new login's handshake waits on; null: the runtime's sockets (chosen so, or no loop here).</summary>
    public EventLoop? ForLogin() => _chosen ? loop.Start()?.Loop : null;
}
