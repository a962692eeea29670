namespace Tunnel2.TunnelClient.Configuration;

/// <summary>How an <c>https://</c> server's certificate is checked (section <c>TunnelClient:Tls</c>; docs/running.md, "TLS to the server"); by default the system's trust store.</summary>
public sealed class ClientTlsOptions
{
    /// <summary>
    /// PEM file of the CA certificate(s) an <c>https://</c> server's certificate must chain to, instead of the system's
    /// trust store (a private CA, a self-signed development certificate).
    /// </summary>
    public string? CaCertificate { get; set; }

    /// <summary>
    /// SHA-256 fingerprint of the server's exact certificate (64 hex digits, colons allowed): that certificate is then
    /// trusted whoever signed it, and any other refused. A renewed certificate needs the new fingerprint.
    /// </summary>
    public string? ServerCertificateSha256 { get; set; }
}
