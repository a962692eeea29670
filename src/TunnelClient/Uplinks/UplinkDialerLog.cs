namespace Tunnel2.TunnelClient.Uplinks;

internal static partial class UplinkDialerLog
{
    [LoggerMessage(EventId = 4661, Level = LogLevel.Warning, Message = "The event loop cannot start here ({Reason}); uplinks use the runtime's sockets (TunnelClient:Uplink:Engine=Sockets)")]
    public static partial void LoopUnavailable(ILogger logger, string reason);
}
