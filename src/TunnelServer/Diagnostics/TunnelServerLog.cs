using System.Net;
using Microsoft.Extensions.Logging;

namespace Tunnel2.TunnelServer.Diagnostics;

internal static partial class TunnelServerLog
{
    [LoggerMessage(EventId = 1, Level = LogLevel.Information, Message = "Uplink connected: session {Session} from {Remote} (protocol v{Version})")]
    public static partial void UplinkConnected(ILogger logger, string session, IPAddress? remote, int version);

    [LoggerMessage(EventId = 2, Level = LogLevel.Information, Message = "Uplink disconnected: session {Session} from {Remote}: {Reason}")]
    public static partial void UplinkDisconnected(ILogger logger, string session, IPAddress? remote, string reason);

    [LoggerMessage(EventId = 3, Level = LogLevel.Warning, Message = "Uplink refused from {Remote}: {Status} {Reason}")]
    public static partial void HandshakeRefused(ILogger logger, IPAddress? remote, int status, string reason);

    [LoggerMessage(EventId = 4, Level = LogLevel.Information, Message = "TunnelServer listening: public {PublicUrl}, tunnel {TunnelUrl}")]
    public static partial void Listening(ILogger logger, Uri publicUrl, Uri tunnelUrl);

    [LoggerMessage(EventId = 5, Level = LogLevel.Information, Message = "Shutting down: closing {Count} uplinks")]
    public static partial void ClosingUplinks(ILogger logger, int count);
}
