namespace Tunnel2.TunnelServer.Edge;

/// <summary>The certificate ask's log lines. A no is Debug: a scanner's every TLS handshake with a made-up name asks.</summary>
internal static partial class CertificateAskLog
{
    [LoggerMessage(EventId = 60, Level = LogLevel.Information, Message = "Edge certificate ask: yes for {Domain} ({Answer})")]
    public static partial void Yes(ILogger logger, string domain, CertificateAskAnswer answer);

    [LoggerMessage(EventId = 61, Level = LogLevel.Debug, Message = "Edge certificate ask: no for {Domain} ({Answer})")]
    public static partial void No(ILogger logger, string domain, CertificateAskAnswer answer);

    [LoggerMessage(EventId = 62, Level = LogLevel.Warning, Message = "Edge certificate ask without ?domain=: is the edge's ask URL right?")]
    public static partial void NoDomain(ILogger logger);
}
