using System.Net;

namespace Tunnel2.TunnelServer.Diagnostics;

internal static partial class TunnelServerLog
{
    [LoggerMessage(EventId = 1, Level = LogLevel.Information, Message = "Uplink connected: session {Session} from {Remote} (protocol version {Version}, over {Transport})")]
    public static partial void UplinkConnected(ILogger logger, string session, IPAddress? remote, int version, string transport);

    [LoggerMessage(EventId = 2, Level = LogLevel.Information, Message = "Uplink disconnected: session {Session} from {Remote}: {Reason}")]
    public static partial void UplinkDisconnected(ILogger logger, string session, IPAddress? remote, string reason);

    [LoggerMessage(EventId = 3, Level = LogLevel.Warning, Message = "Uplink refused from {Remote}: {Status} {Reason}")]
    public static partial void HandshakeRefused(ILogger logger, IPAddress? remote, int status, string reason);

    [LoggerMessage(EventId = 4, Level = LogLevel.Information, Message = "TunnelServer listening: public {PublicUrl}, tunnel {TunnelUrl}")]
    public static partial void Listening(ILogger logger, Uri publicUrl, Uri tunnelUrl);

    /// <param name="nodeHeader">What visitors see of the name: the Tunnel2-Node response header, or nothing.</param>
    [LoggerMessage(EventId = 19, Level = LogLevel.Information, Message = "Node name {Node} (--node-name), used in logs and metrics{NodeHeader}")]
    public static partial void Node(ILogger logger, string node, string nodeHeader);

    [LoggerMessage(EventId = 5, Level = LogLevel.Information, Message = "Shutting down: closing {Count} uplinks")]
    public static partial void ClosingUplinks(ILogger logger, int count);

    [LoggerMessage(EventId = 6, Level = LogLevel.Information, Message = "Uplink replaced: session {Session}, old uplink {Old} of instance {Instance}: {Reason}")]
    public static partial void UplinkReplaced(ILogger logger, string session, string old, string instance, string reason);

    [LoggerMessage(EventId = 7, Level = LogLevel.Information, Message = "Draining: no new uplinks or public requests; TCP ports closed to new callers; {Uplinks} uplinks told to finish; waiting up to {TimeoutMs} ms for {InFlight} requests and {TcpConnections} TCP connections in flight")]
    public static partial void Draining(ILogger logger, int uplinks, long timeoutMs, long inFlight, int tcpConnections);

    [LoggerMessage(EventId = 8, Level = LogLevel.Information, Message = "Drained: every public request and TCP connection finished")]
    public static partial void Drained(ILogger logger);

    [LoggerMessage(EventId = 9, Level = LogLevel.Warning, Message = "Drain deadline passed with {InFlight} public requests ({Upgraded} of them upgraded connections such as WebSockets) and {TcpConnections} TCP connections still open; cutting them")]
    public static partial void DrainTimedOut(ILogger logger, long inFlight, long upgraded, int tcpConnections);

    [LoggerMessage(EventId = 10, Level = LogLevel.Debug, Message = "Uplink handshake from {Remote} abandoned: {Reason}")]
    public static partial void HandshakeAbandoned(ILogger logger, IPAddress? remote, string reason);

    [LoggerMessage(EventId = 11, Level = LogLevel.Warning, Message = "Tunnel port: accepting a connection failed ({Error}): {Reason}")]
    public static partial void AcceptFailed(ILogger logger, System.Net.Sockets.SocketError error, string reason);

    [LoggerMessage(EventId = 12, Level = LogLevel.Error, Message = "Tunnel port: a connection failed unexpectedly")]
    public static partial void ConnectionFailed(ILogger logger, Exception exception);

    [LoggerMessage(EventId = 13, Level = LogLevel.Warning, Message = "Stopped with {Count} tunnel-port connections still open; they are closed with the process")]
    public static partial void ConnectionsLeftAtStop(ILogger logger, int count);

    [LoggerMessage(EventId = 14, Level = LogLevel.Information, Message = "TLS certificate {Certificate} loaded from {Path}")]
    public static partial void CertificateLoaded(ILogger logger, string certificate, string path);

    [LoggerMessage(EventId = 15, Level = LogLevel.Information, Message = "TLS certificate reloaded: new connections get {Certificate} from {Path}")]
    public static partial void CertificateReloaded(ILogger logger, string certificate, string path);

    [LoggerMessage(EventId = 16, Level = LogLevel.Warning, Message = "TLS certificate {Path} changed but cannot be used; keeping the one in use: {Reason}")]
    public static partial void CertificateReloadFailed(ILogger logger, string path, string reason);

    [LoggerMessage(EventId = 17, Level = LogLevel.Debug, Message = "Tunnel port: TLS handshake with {Remote} failed: {Reason}")]
    public static partial void TlsHandshakeFailed(ILogger logger, IPAddress? remote, string reason);

    [LoggerMessage(EventId = 18, Level = LogLevel.Information, Message = "Admin listener on {AdminUrl}: /metrics, /healthz, /api/…, /openapi/v1.json")]
    public static partial void AdminListening(ILogger logger, Uri adminUrl);

    [LoggerMessage(EventId = 25, Level = LogLevel.Information, Message = "Low-latency mode: socket completions and Kestrel's scheduling run inline ({Variable}=1)")]
    public static partial void LowLatencyMode(ILogger logger, string variable);

    [LoggerMessage(EventId = 26, Level = LogLevel.Information, Message = "Public listener {Url} runs on the server's event loop (TunnelServer:Public:Transport=Loop)")]
    public static partial void PublicOnLoop(ILogger logger, Uri url);

    [LoggerMessage(EventId = 27, Level = LogLevel.Warning, Message = "TunnelServer:Public:UpgradeRelay=Loop takes effect only with the public listener on the server's event loop (an http:// public URL, TunnelServer:Public:Transport=Loop, Linux x86-64); upgraded connections use the task relay")]
    public static partial void UpgradesOnTasks(ILogger logger);

    [LoggerMessage(EventId = 20, Level = LogLevel.Information, Message = "Credentials file {Path}: {Clients} clients, {Visitors} visitor policies")]
    public static partial void CredentialsLoaded(ILogger logger, string path, int clients, int visitors);

    [LoggerMessage(EventId = 21, Level = LogLevel.Information, Message = "Credentials file {Path} changed: now {Clients} clients, {Visitors} visitor policies")]
    public static partial void CredentialsReloaded(ILogger logger, string path, int clients, int visitors);

    [LoggerMessage(EventId = 22, Level = LogLevel.Error, Message = "Credentials file {Path} changed but cannot be used; keeping the credentials in force: {Reason}")]
    public static partial void CredentialsReloadFailed(ILogger logger, string path, string reason);

    [LoggerMessage(EventId = 23, Level = LogLevel.Warning, Message = "Login from {Remote} refused: credential {Credential} may not serve session {Session}")]
    public static partial void SessionNotAllowed(ILogger logger, System.Net.IPAddress? remote, string credential, string session);

    [LoggerMessage(EventId = 24, Level = LogLevel.Warning, Message = "Uplink {Uplink} revoked: credential {Credential} is gone from the credentials file or no longer serves session {Session}; draining it")]
    public static partial void LoginRevoked(ILogger logger, string uplink, string credential, string session);
}
