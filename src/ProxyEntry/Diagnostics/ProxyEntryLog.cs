using Microsoft.Extensions.Logging;

namespace Tunnel2.ProxyEntry.Diagnostics;

internal static partial class ProxyEntryLog
{
    [LoggerMessage(EventId = 200, Level = LogLevel.Information, Message = "No live tunnel for session {Session}: {Method} {Target} answered 404")]
    public static partial void TunnelNotFound(ILogger logger, string session, string method, string target);

    [LoggerMessage(EventId = 201, Level = LogLevel.Warning, Message = "Session {Session} stream {StreamId}: {Method} {Target} failed with {Status} ({Reason})")]
    public static partial void RequestFailed(ILogger logger, string session, uint streamId, string method, string target, int status, string reason);

    [LoggerMessage(EventId = 202, Level = LogLevel.Warning, Message = "Session {Session} stream {StreamId}: response aborted after its head was sent ({Reason})")]
    public static partial void ResponseAborted(ILogger logger, string session, uint streamId, string reason);

    [LoggerMessage(EventId = 203, Level = LogLevel.Debug, Message = "Session {Session} stream {StreamId}: caller went away ({Reason})")]
    public static partial void CallerGone(ILogger logger, string session, uint streamId, string reason);

    [LoggerMessage(EventId = 204, Level = LogLevel.Information, Message = "Session {Session} stream {StreamId}: refused by a draining client; retrying on another uplink")]
    public static partial void RetryingRefusedStream(ILogger logger, string session, uint streamId);

    [LoggerMessage(EventId = 205, Level = LogLevel.Debug, Message = "Session {Session} stream {StreamId}: switched to {Protocol}; relaying bytes both ways")]
    public static partial void Upgraded(ILogger logger, string session, uint streamId, string protocol);

    [LoggerMessage(EventId = 224, Level = LogLevel.Debug, Message = "Session {Session} stream {StreamId}: the caller's connection is relayed on the server's loop ({EarlyBytes} early bytes)")]
    public static partial void UpgradeOnLoop(ILogger logger, string session, uint streamId, int earlyBytes);

    [LoggerMessage(EventId = 206, Level = LogLevel.Information, Message = "Session {Session} stream {StreamId}: upgraded connection ended after {BytesIn} bytes in, {BytesOut} out ({Reason})")]
    public static partial void UpgradeEnded(ILogger logger, string session, uint streamId, long bytesIn, long bytesOut, string reason);

    [LoggerMessage(EventId = 207, Level = LogLevel.Information, Message = "Session {Session} stream {StreamId}: the client could not reach its backend, or it failed before answering an idempotent request; retrying once on another client")]
    public static partial void RetryingOnAnotherClient(ILogger logger, string session, uint streamId);

    [LoggerMessage(EventId = 208, Level = LogLevel.Warning, Message = "Session {Session}: client {Uplink} passed over for {BackoffMs} ms after answers in a row that its backend was unreachable")]
    public static partial void ClientEjected(ILogger logger, string session, string uplink, long backoffMs);

    [LoggerMessage(EventId = 209, Level = LogLevel.Information, Message = "Session {Session}: visitor {Address} refused ({Reason})")]
    public static partial void VisitorRefused(ILogger logger, string session, System.Net.IPAddress? address, string reason);

    [LoggerMessage(EventId = 210, Level = LogLevel.Information, Message = "Rate limited: {Path} from {Address} ({Limit})")]
    public static partial void RateLimited(ILogger logger, string path, System.Net.IPAddress? address, string limit);

    [LoggerMessage(EventId = 211, Level = LogLevel.Warning,
        Message = "Stream {StreamId}: reading the caller's request body failed ({ErrorType}: {Error}); the stream is reset (Cancelled), so the client cuts the backend's request; an answer not yet begun is a 502")]
    public static partial void RequestBodyStopped(ILogger logger, uint streamId, string errorType, string error);

    [LoggerMessage(EventId = 212, Level = LogLevel.Debug,
        Message = "Stream {StreamId}: the stream ended before the caller's request body was sent ({ErrorType}: {Error})")]
    public static partial void RequestBodyStoppedByStream(ILogger logger, uint streamId, string errorType, string error);
}
