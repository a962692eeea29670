namespace Tunnel2.TunnelServer.Tcp;

/// <summary>The port registry's events (<see cref="TcpSessions"/>); the callers' events are the door's (ProxyEntry's <c>TcpLog</c>, same 46xx range).</summary>
internal static partial class TcpPortLog
{
    [LoggerMessage(EventId = 4601, Level = LogLevel.Information, Message = "TCP port {Port} opened for session {Session} (public address {Address})")]
    public static partial void PortOpened(ILogger logger, string session, int port, string address);

    [LoggerMessage(EventId = 4602, Level = LogLevel.Information, Message = "TCP port {Port} of session {Session} closed: its last client left")]
    public static partial void PortClosed(ILogger logger, string session, int port);

    [LoggerMessage(EventId = 4603, Level = LogLevel.Warning, Message = "TCP login of session {Session} refused: {Reason}")]
    public static partial void LoginRefused(ILogger logger, string session, string reason);
}
