
namespace Tunnel2.TunnelClient.Diagnostics;

internal static partial class TunnelClientLog
{
    /// <param name="target">What the session is served from: the backend(s), the TCP target, or both.</param>
    [LoggerMessage(EventId = 1, Level = LogLevel.Information, Message = "Connected to {Server}: session {Session} -> {Target}")]
    public static partial void Connected(ILogger logger, string server, string session, string target);

    [LoggerMessage(EventId = 30, Level = LogLevel.Warning, Message = "Backend {Target} does not answer ({Reason}): callers get 502 until it does. Still serving; checking again")]
    public static partial void BackendDown(ILogger logger, string target, string reason);

    [LoggerMessage(EventId = 31, Level = LogLevel.Information, Message = "Backend {Target} answers now")]
    public static partial void BackendAnswers(ILogger logger, string target);

    [LoggerMessage(EventId = 2, Level = LogLevel.Warning, Message = "Disconnected from {Server}: {Reason}")]
    public static partial void Disconnected(ILogger logger, string server, string reason);

    [LoggerMessage(EventId = 3, Level = LogLevel.Warning, Message = "Could not connect to {Server}: {Reason}; retrying in {DelayMs} ms")]
    public static partial void ConnectFailed(ILogger logger, string server, string reason, long delayMs);

    /// <param name="refusal">What was refused and what to do (<see cref="Uplinks.LoginRefusal"/>).</param>
    [LoggerMessage(EventId = 4, Level = LogLevel.Critical, Message = "{Refusal} Not retrying.")]
    public static partial void LoginRefused(ILogger logger, string refusal);

    [LoggerMessage(EventId = 5, Level = LogLevel.Warning, Message = "Stream {StreamId}: {Method} {Target} -> backend failed: {Reason}")]
    public static partial void BackendFailed(ILogger logger, uint streamId, string method, string target, string reason);

    [LoggerMessage(EventId = 6, Level = LogLevel.Warning, Message = "Stream {StreamId}: refused, {Queued} requests already queued (503)")]
    public static partial void QueueFull(ILogger logger, uint streamId, int queued);

    [LoggerMessage(EventId = 7, Level = LogLevel.Debug, Message = "Stream {StreamId}: cancelled by the server ({Reason})")]
    public static partial void StreamCancelled(ILogger logger, uint streamId, string reason);

    [LoggerMessage(EventId = 8, Level = LogLevel.Error, Message = "Stream {StreamId}: relay failed unexpectedly")]
    public static partial void RelayCrashed(ILogger logger, uint streamId, Exception exception);

    [LoggerMessage(EventId = 9, Level = LogLevel.Information, Message = "Stopping: letting the {OpenStreams} requests in flight over {Server} finish (waiting up to {TimeoutMs} ms)")]
    public static partial void Draining(ILogger logger, string server, int openStreams, long timeoutMs);

    [LoggerMessage(EventId = 10, Level = LogLevel.Information, Message = "Drained: every request in flight finished")]
    public static partial void Drained(ILogger logger);

    [LoggerMessage(EventId = 11, Level = LogLevel.Warning, Message = "Drain deadline passed; the requests still in flight were cut, {Upgraded} upgraded streams (WebSockets, …) among them")]
    public static partial void DrainTimedOut(ILogger logger, int upgraded);

    [LoggerMessage(EventId = 12, Level = LogLevel.Warning, Message = "Stream {StreamId}: backend connection closed, not reused: the backend broke HTTP/1.1 framing ({Cause})")]
    public static partial void BackendBrokeFraming(ILogger logger, uint streamId, string cause);

    [LoggerMessage(EventId = 13, Level = LogLevel.Debug, Message = "Stream {StreamId}: backend connection closed, not reused ({Cause})")]
    public static partial void BackendConnectionClosed(ILogger logger, uint streamId, string cause);

    [LoggerMessage(EventId = 14, Level = LogLevel.Warning, Message = "Stream {StreamId}: upgrade refused with 503: {Upgraded} upgraded streams are open, the most allowed (TunnelClient:Limits:MaxUpgradedStreams)")]
    public static partial void UpgradeRefused(ILogger logger, uint streamId, int upgraded);

    [LoggerMessage(EventId = 15, Level = LogLevel.Debug, Message = "Stream {StreamId}: upgraded stream ended ({Reason})")]
    public static partial void UpgradedStreamEnded(ILogger logger, uint streamId, string reason);

    [LoggerMessage(EventId = 16, Level = LogLevel.Information, Message = "Stream {StreamId}: upgraded stream moved no byte for {IdleTimeoutMs} ms; closing it (TunnelClient:Limits:UpgradedIdleTimeout)")]
    public static partial void UpgradedStreamIdle(ILogger logger, uint streamId, long idleTimeoutMs);

    [LoggerMessage(EventId = 17, Level = LogLevel.Critical, Message = "The certificate of {Server} was refused: {Reason}. Not retrying (exit code 4)")]
    public static partial void CertificateRefused(ILogger logger, string server, string reason);

    [LoggerMessage(EventId = 18, Level = LogLevel.Information, Message = "Backend health probe {Url}: {Health} ({Detail})")]
    public static partial void HealthChanged(ILogger logger, string url, string health, string detail);

    [LoggerMessage(EventId = 19, Level = LogLevel.Warning, Message = "The server speaks protocol version {Version}, which has no health reports: it keeps sending requests while the backend is unready")]
    public static partial void HealthNotSupported(ILogger logger, int version);

    [LoggerMessage(EventId = 20, Level = LogLevel.Warning, Message = "Backend {Backend} ejected for {BackoffMs} ms after {Failures} failures in a row (connect refused, or failed before answering); the other backends take its requests")]
    public static partial void BackendEjected(ILogger logger, string backend, int failures, long backoffMs);

    [LoggerMessage(EventId = 21, Level = LogLevel.Debug, Message = "Stream {StreamId}: backend {Failed} could not be reached or failed before answering ({Detail}); trying {Next}")]
    public static partial void BackendRetried(ILogger logger, uint streamId, string failed, string detail, string next);

    [LoggerMessage(EventId = 22, Level = LogLevel.Information, Message = "Admin listener on {AdminUrl}: /metrics, /healthz")]
    public static partial void AdminListening(ILogger logger, Uri adminUrl);

    [LoggerMessage(EventId = 23, Level = LogLevel.Information, Message = "Request inspector on {InspectUrl}: keeps the last {Capacity} requests, {BodyLimit} bytes of each body")]
    public static partial void InspectorListening(ILogger logger, Uri inspectUrl, int capacity, int bodyLimit);

    [LoggerMessage(EventId = 24, Level = LogLevel.Information, Message = "Inspector: request {OriginalId} replayed as {ReplayId}: {Method} {Target} to {Backend} answered {Status}")]
    public static partial void RequestReplayed(ILogger logger, long originalId, long replayId, string method, string target, string backend, int status);

    /// <summary>For structured logs; the console gets the plain line (<see cref="ForwardingLine"/>).</summary>
    [LoggerMessage(EventId = 26, Level = LogLevel.Debug, Message = "Forwarding {PublicUrl} -> {Backend}")]
    public static partial void PublicUrl(ILogger logger, string publicUrl, string backend);

    [LoggerMessage(EventId = 25, Level = LogLevel.Information, Message = "Inspector: replay of request {OriginalId} refused: {Reason}")]
    public static partial void ReplayRefused(ILogger logger, long originalId, string reason);

    [LoggerMessage(EventId = 27, Level = LogLevel.Information, Message = "{Host} resolves to a new node {Address}: opening {Uplinks} uplink(s) to it")]
    public static partial void NodeFound(ILogger logger, string host, string address, int uplinks);

    [LoggerMessage(EventId = 28, Level = LogLevel.Information, Message = "{Host} no longer resolves to {Address}: its uplinks drain and close")]
    public static partial void NodeLeft(ILogger logger, string host, string address);

    [LoggerMessage(EventId = 29, Level = LogLevel.Warning, Message = "Could not resolve {Host} ({Reason}); keeping the uplinks to its {Nodes} known node(s)")]
    public static partial void ResolveFailed(ILogger logger, string host, int nodes, string reason);
}
