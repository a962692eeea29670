namespace Tunnel2.TunnelClient.Tcp;

internal static partial class TcpClientLog
{
    /// <summary>For structured logs; the console gets the plain line (<see cref="Diagnostics.ForwardingLine"/>).</summary>
    [LoggerMessage(EventId = 4651, Level = LogLevel.Debug, Message = "Forwarding tcp://{Address} -> {Target}")]
    public static partial void Forwarding(ILogger logger, string address, string target);

    [LoggerMessage(EventId = 4652, Level = LogLevel.Warning, Message = "TCP stream {StreamId}: target {Target} unreachable: {Reason}")]
    public static partial void TargetUnreachable(ILogger logger, uint streamId, string target, string reason);

    [LoggerMessage(EventId = 4653, Level = LogLevel.Information, Message = "TCP stream {StreamId} from {Caller} to {Target} ended: {Reason}; {Sent} bytes to the server, {Received} from it")]
    public static partial void Ended(ILogger logger, uint streamId, string caller, string target, string reason, long sent, long received);

    [LoggerMessage(EventId = 4654, Level = LogLevel.Warning, Message = "Stream {StreamId}: an HTTP request reached a client that serves TCP only (--tcp without --backend): refused")]
    public static partial void HttpRefused(ILogger logger, uint streamId);

    [LoggerMessage(EventId = 4655, Level = LogLevel.Warning, Message = "TCP stream {StreamId} opened on a client without --tcp: refused")]
    public static partial void TcpRefused(ILogger logger, uint streamId);

    [LoggerMessage(EventId = 4657, Level = LogLevel.Warning, Message = "Server {Server} gave the session TCP port {Port}, not {Agreed} as the others: callers sent to it on {Agreed} miss this session (its own TcpPorts entry, or a port it had opened already)")]
    public static partial void PortDiffers(ILogger logger, string server, int port, int agreed);

    [LoggerMessage(EventId = 4658, Level = LogLevel.Warning, Message = "The event loop cannot start here ({Reason}); TCP targets use the runtime's sockets (TunnelClient:Tcp:Engine=Sockets)")]
    public static partial void LoopUnavailable(ILogger logger, string reason);

    [LoggerMessage(EventId = 4656, Level = LogLevel.Error, Message = "TCP stream {StreamId}: relay failed")]
    public static partial void RelayCrashed(ILogger logger, uint streamId, Exception exception);
}
