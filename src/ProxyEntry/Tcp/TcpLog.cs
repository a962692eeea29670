using System.Net;
using Microsoft.Extensions.Logging;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>The TCP door's callers (46xx); the ports' opening, closing and login refusals are logged by the host's registry (TunnelServer's <c>TcpPortLog</c>).</summary>
internal static partial class TcpLog
{
    [LoggerMessage(EventId = 4604, Level = LogLevel.Warning, Message = "TCP caller {Caller} of session {Session} refused: {Reason}")]
    public static partial void CallerRefused(ILogger logger, string session, IPEndPoint? caller, string reason);

    [LoggerMessage(EventId = 4605, Level = LogLevel.Debug, Message = "TCP caller {Caller} of session {Session} on stream {StreamId} of {Uplink}")]
    public static partial void CallerOpened(ILogger logger, string session, IPEndPoint? caller, uint streamId, string uplink);

    [LoggerMessage(EventId = 4606, Level = LogLevel.Information, Message = "TCP connection from {Caller} of session {Session} (stream {StreamId}) ended: {Reason}; {Sent} bytes to the client, {Received} from it")]
    public static partial void CallerEnded(ILogger logger, string session, IPEndPoint? caller, uint streamId, string reason, long sent, long received);

    [LoggerMessage(EventId = 4607, Level = LogLevel.Information, Message = "TCP connection from {Caller} of session {Session} (stream {StreamId}) idle for {TimeoutMs} ms: closed")]
    public static partial void CallerIdle(ILogger logger, string session, IPEndPoint? caller, uint streamId, long timeoutMs);

    [LoggerMessage(EventId = 4609, Level = LogLevel.Error, Message = "TCP caller of session {Session}: relay failed")]
    public static partial void CallerFailed(ILogger logger, string session, Exception exception);

    [LoggerMessage(EventId = 4608, Level = LogLevel.Error, Message = "TCP port {Port} of session {Session} stopped accepting")]
    public static partial void AcceptFailed(ILogger logger, string session, int port, Exception exception);

    [LoggerMessage(EventId = 4610, Level = LogLevel.Information, Message = "TCP caller {Caller} of session {Session}: its target refused the connection (client {Uplink}, stream {StreamId}); nothing reached a target, so another client may take it")]
    public static partial void TargetRefused(ILogger logger, string session, IPEndPoint? caller, uint streamId, string uplink);

    [LoggerMessage(EventId = 4611, Level = LogLevel.Warning, Message = "TCP client {Uplink} of session {Session} ejected for {BackoffMs} ms: its target refused connections (TunnelServer:Tcp:EjectAfter)")]
    public static partial void ClientEjected(ILogger logger, string session, string uplink, long backoffMs);

    [LoggerMessage(EventId = 4612, Level = LogLevel.Warning, Message = "The server's event loop cannot start here ({Reason}); TCP callers and uplinks use the runtime's sockets (TunnelServer:Tcp:Engine=Sockets, TunnelServer:Uplink:Engine=Sockets)")]
    public static partial void LoopUnavailable(ILogger logger, string reason);

    [LoggerMessage(EventId = 4613, Level = LogLevel.Error, Message = "The server's event loop: a callback failed")]
    public static partial void LoopFault(ILogger logger, Exception exception);
}
