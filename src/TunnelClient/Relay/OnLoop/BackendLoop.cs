using Tunnel2.Loops;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.EventLoops;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// Whether backend connections live on the client's event loop: <c>TunnelClient:Backends:Relay</c> = <c>Loop</c>, the
/// uplinks on the loop too (<c>Uplink:Engine</c> = <c>Loop</c>: the answer then goes up in the turn that read it) and a
/// platform with the loop (Linux x86-64); else, or when the loop cannot start here (logged once), the runtime's sockets.
/// </summary>
internal static partial class BackendLoop
{
    /// <summary>Whether the options ask for it (the host then writes its log lines off the loop).</summary>
    public static bool Requested(TunnelClientOptions options) =>
        options.Backends.Relay == BackendsOptions.RelayLoop && options.Uplink.Engine == ClientUplinkOptions.EngineLoop && EventLoop.IsSupported;

    /// <returns>The loop for the backend connections, or null for the runtime's sockets.</returns>
    public static EventLoop? Choose(TunnelClientOptions options, ClientLoop? loop, ILogger logger)
    {
        if (loop is null || !Requested(options))
        {
            return null;
        }

        try
        {
            EventLoop chosen = loop.Loop;
            OnLoop(logger);
            return chosen;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or InvalidOperationException or PlatformNotSupportedException)
        {
            LoopUnavailable(logger, ex.Message);
            return null;
        }
    }

    [LoggerMessage(EventId = 4664, Level = LogLevel.Information, Message = "Backend connections run on the client's event loop (TunnelClient:Backends:Relay=Loop; TLS backends and upgrades keep the runtime's sockets)")]
    private static partial void OnLoop(ILogger logger);

    [LoggerMessage(EventId = 4663, Level = LogLevel.Warning, Message = "The event loop cannot start here ({Reason}); backend connections use the runtime's sockets (TunnelClient:Backends:Relay=Tasks)")]
    private static partial void LoopUnavailable(ILogger logger, string reason);
}
