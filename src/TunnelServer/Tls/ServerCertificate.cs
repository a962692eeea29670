using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Tunnel2.Hosting;
using Tunnel2.TunnelServer.Diagnostics;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.TunnelServer.Tls;

/// <summary>
/// The server's certificate, read from a PEM certificate file (leaf first, then any intermediates) and a PEM key file,
/// and read again when either file changes: a renewed certificate (certbot, cert-manager, a mounted secret) takes
/// effect for new connections without a restart. A reload that fails (a half-written file, a key that does not match)
/// keeps the certificate in use and logs why; the next change tries again.
/// </summary>
public sealed class ServerCertificate : IDisposable
{
    private readonly string _certificatePath;
    private readonly string _keyPath;
    private readonly ILogger<ServerCertificate> _logger;
    private readonly SettledFileWatch _watch;
    private volatile Loaded _current;

    public ServerCertificate(string certificatePath, string keyPath, ILogger<ServerCertificate> logger, TimeProvider? time = null)
    {
        _certificatePath = Path.GetFullPath(certificatePath);
        _keyPath = Path.GetFullPath(keyPath);
        _logger = logger;
        _current = Load(_certificatePath, _keyPath);
        // Tools replace a certificate and its key in two writes; the watch waits for both to land.
        _watch = new SettledFileWatch([_certificatePath, _keyPath], Reload, time);

        TunnelServerLog.CertificateLoaded(_logger, Describe(_current.Certificate), _certificatePath);
    }

    /// <summary>The certificate new connections get.</summary>
    public X509Certificate2 Certificate => _current.Certificate;

    /// <summary>The same certificate with its chain, built once per load rather than once per handshake.</summary>
    public SslStreamCertificateContext Context => _current.Context;

    /// <summary>Reads and pairs the two files; the message of the exception says what is wrong with which file.</summary>
    /// <exception cref="InvalidConfigurationException">A file is missing, unreadable, not PEM, or the key does not match.</exception>
    public static X509Certificate2 Read(string certificatePath, string keyPath) => Load(certificatePath, keyPath).Certificate;

    public void Dispose() => _watch.Dispose();

    private static Loaded Load(string certificatePath, string keyPath)
    {
        X509Certificate2? leaf = null;
        var intermediates = new X509Certificate2Collection();
        try
        {
#pragma warning disable CA2000 // the leaf lives on in the Loaded that serves TLS with it; a reload leaves the old one to the GC, as handshakes in flight may still use it
            leaf = X509Certificate2.CreateFromPemFile(certificatePath, keyPath);
#pragma warning restore CA2000
            intermediates.ImportFromPemFile(certificatePath);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or CryptographicException or ArgumentException)
        {
            leaf?.Dispose(); // the key loaded but the chain did not
            throw new InvalidConfigurationException(
                $"The certificate '{certificatePath}' with the key '{keyPath}' cannot be used: {ex.Message}");
        }

        // The file's first certificate is the leaf; the rest, if any, are sent along as its chain.
        intermediates.RemoveAt(0);
        return new Loaded(leaf, SslStreamCertificateContext.Create(leaf, intermediates, offline: true));
    }

    private static string Describe(X509Certificate2 certificate) =>
        $"{certificate.Subject} (SHA-256 {certificate.GetCertHashString(HashAlgorithmName.SHA256)}, valid until {certificate.NotAfter:u})";

    private void Reload()
    {
        try
        {
            Loaded loaded = Load(_certificatePath, _keyPath);
            if (loaded.Certificate.RawDataMemory.Span.SequenceEqual(_current.Certificate.RawDataMemory.Span))
            {
                return; // touched, not changed
            }

            _current = loaded;
            TunnelServerLog.CertificateReloaded(_logger, Describe(loaded.Certificate), _certificatePath);
        }
        catch (InvalidConfigurationException ex)
        {
            TunnelServerLog.CertificateReloadFailed(_logger, _certificatePath, ex.Message);
        }
    }

    private sealed record Loaded(X509Certificate2 Certificate, SslStreamCertificateContext Context);
}
