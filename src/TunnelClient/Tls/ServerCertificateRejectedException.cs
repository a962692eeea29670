namespace Tunnel2.TunnelClient.Tls;

/// <summary>The server's TLS certificate is not trusted: retrying cannot help, so the client stops (exit code 4).</summary>
public sealed class ServerCertificateRejectedException : Exception
{
    public ServerCertificateRejectedException()
    {
        Reason = string.Empty;
    }

    public ServerCertificateRejectedException(string reason)
        : base($"The server's certificate was refused: {reason}")
    {
        Reason = reason;
    }

    public ServerCertificateRejectedException(string reason, Exception innerException)
        : base($"The server's certificate was refused: {reason}", innerException)
    {
        Reason = reason;
    }

    /// <summary>Why, in words a user can act on.</summary>
    public string Reason { get; }
}
