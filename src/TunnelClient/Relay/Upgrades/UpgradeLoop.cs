using Tunnel2.Loops;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.EventLoops;

namespace Tunnel2.TunnelClient.Relay.Upgrades;

/// <summary>
/// Whether upgraded streams are relayed on the client's event loop: <c>TunnelClient:Upgrades:Relay</c> = <c>Loop</c>, the
/// uplinks on the loop too (<c>Uplink:Engine</c> = <c>Loop</c>) and a platform with the loop (Linux x86-64); else, or
/// when the loop cannot start here (logged once), the task relay.
/// </summary>
internal sealed partial class UpgradeLoop
{
    /// <returns>The loop to relay on, or null for the task relay.</returns>
    public static EventLoop? Choose(TunnelClientOptions options, ClientLoop? loop, ILogger logger)
    {
        if (loop is null || options.Upgrades.Relay != UpgradesOptions.RelayLoop
            || options.Uplink.Engine != ClientUplinkOptions.EngineLoop || !EventLoop.IsSupported)
        {
            return null;
        }

        try
        {
            return loop.Loop;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or InvalidOperationException or PlatformNotSupportedException)
        {
            LoopUnavailable(logger, ex.Message);
            return null;
        }
    }

    [LoggerMessage(EventId = 4662, Level = LogLevel.Warning, Message = "The event loop cannot start here ({Reason}); upgraded streams use the task relay (TunnelClient:Upgrades:Relay=Tasks)")]
    private static partial void LoopUnavailable(ILogger logger, string reason);
}
