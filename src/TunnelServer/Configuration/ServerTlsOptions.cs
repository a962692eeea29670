namespace Tunnel2.TunnelServer.Configuration;

/// <summary>The certificate of the listeners whose URL is <c>https://</c> (section <c>TunnelServer:Tls</c>).</summary>
public sealed class ServerTlsOptions
{
    /// <summary>
    /// PEM file of the server's certificate (leaf first, then any intermediates), for the listeners whose URL is
    /// <c>https://</c>. Reloaded when the file changes; connections already open keep the certificate they began with.
    /// </summary>
    public string? Certificate { get; set; }

    /// <summary>PEM file of the certificate's private key (PKCS#8, or the key type's own PEM form); unencrypted.</summary>
    public string? CertificateKey { get; set; }
}
