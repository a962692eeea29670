using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A throwaway CA made in code, the server certificates it signs (and a self-signed one), written as PEM files into a
/// temporary folder removed on dispose: no certificate is checked in, none comes from the machine.
/// </summary>
public sealed class TestCertificates : IDisposable
{
    private readonly string _folder = Directory.CreateTempSubdirectory("tunnel2-tls-").FullName;
    private readonly X509Certificate2 _authority;
    private int _files;

    public TestCertificates()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=Tunnel2 Test CA", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: false, 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        _authority = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(1));
        AuthorityPath = Write("ca.pem", _authority.ExportCertificatePem());
    }

    /// <summary>The CA's certificate, PEM.</summary>
    public string AuthorityPath { get; }

    public X509Certificate2 Authority => _authority;

    /// <summary>A server certificate for 127.0.0.1 and localhost (or <paramref name="dnsName"/> alone), signed by the CA.</summary>
    public PemPair IssueServer(string? dnsName = null, DateTimeOffset? notAfter = null) => Issue(dnsName, notAfter, selfSigned: false, _authority);

    /// <summary>
    /// A server certificate for 127.0.0.1 and localhost signed by an intermediate CA that the root signed, its PEM file
    /// holding the leaf and then the intermediate (as certbot's fullchain.pem): a client that trusts only the root
    /// needs the server to send the intermediate.
    /// </summary>
    public PemPair IssueServerViaIntermediate()
    {
        using var intermediateKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=Tunnel2 Test Intermediate CA", intermediateKey, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: true, 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        using X509Certificate2 signed = request.Create(_authority, DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(60), RandomNumberGenerator.GetBytes(16));
        using X509Certificate2 intermediate = signed.CopyWithPrivateKey(intermediateKey);
        PemPair leaf = Issue(dnsName: null, notAfter: null, selfSigned: false, issuer: intermediate);
        File.AppendAllText(leaf.CertificatePath, intermediate.ExportCertificatePem() + "\n");
        return leaf;
    }

    /// <summary>A server certificate for 127.0.0.1 and localhost that no CA signed.</summary>
    public PemPair IssueSelfSigned() => Issue(dnsName: null, notAfter: null, selfSigned: true, _authority);

    /// <summary>An HttpClient handler that trusts this CA (as a caller with the CA installed would).</summary>
    public SocketsHttpHandler CreateTrustingHandler()
    {
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.Add(_authority);
        return new SocketsHttpHandler
        {
            UseCookies = false,
            AllowAutoRedirect = false,
            SslOptions = { CertificateChainPolicy = policy },
        };
    }

    public void Dispose()
    {
        _authority.Dispose();
        Directory.Delete(_folder, recursive: true);
    }

    private PemPair Issue(string? dnsName, DateTimeOffset? notAfter, bool selfSigned, X509Certificate2 issuer)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest(dnsName is null ? "CN=127.0.0.1" : $"CN={dnsName}", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        if (dnsName is null)
        {
            names.AddIpAddress(IPAddress.Loopback);
            names.AddDnsName("localhost");
        }
        else
        {
            names.AddDnsName(dnsName);
        }

        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        DateTimeOffset notBefore = DateTimeOffset.UtcNow.AddDays(-1);
        DateTimeOffset until = notAfter ?? DateTimeOffset.UtcNow.AddDays(30);
        using X509Certificate2 certificate = selfSigned
            ? request.CreateSelfSigned(notBefore, until)
            : request.Create(issuer, notBefore, until, RandomNumberGenerator.GetBytes(16));
        int n = Interlocked.Increment(ref _files);
        string certificatePath = Write($"server-{n}.pem", certificate.ExportCertificatePem() + "\n");
        string keyPath = Write($"server-{n}.key", key.ExportPkcs8PrivateKeyPem());
        return new PemPair(certificatePath, keyPath, certificate.GetCertHashString(HashAlgorithmName.SHA256));
    }

    private string Write(string name, string pem)
    {
        string path = Path.Combine(_folder, name);
        File.WriteAllText(path, pem);
        return path;
    }

    /// <param name="Sha256">The certificate's SHA-256 fingerprint, hex.</param>
    public sealed record PemPair(string CertificatePath, string KeyPath, string Sha256);
}
