using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Tls;

namespace Tunnel2.UnitTests.Tls;

public sealed class ServerCertificatePolicyTests
{
    private static X509Certificate2 SelfSigned()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=server.test", key, HashAlgorithmName.SHA256);
        return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
    }

    private static ServerCertificatePolicy Policy(string? pin = null) =>
        new(new TunnelClientOptions { Server = "https://server.test", Tls = { ServerCertificateSha256 = pin } });

    [Fact]
    public void Without_a_pin_a_certificate_the_system_trusts_passes_and_errors_are_explained()
    {
        using X509Certificate2 certificate = SelfSigned();
        ServerCertificatePolicy policy = Policy();

        Assert.Null(policy.Check("server.test", certificate, chain: null, SslPolicyErrors.None));
        string? mismatch = policy.Check("other.test", certificate, chain: null, SslPolicyErrors.RemoteCertificateNameMismatch);
        Assert.Contains("not issued for 'other.test' (subject CN=server.test)", mismatch, StringComparison.Ordinal);
        string? untrusted = policy.Check("server.test", certificate, chain: null, SslPolicyErrors.RemoteCertificateChainErrors);
        Assert.Contains("--ca-certificate", untrusted, StringComparison.Ordinal);
        Assert.Equal("the server sent no certificate", policy.Check("server.test", null, null, SslPolicyErrors.RemoteCertificateNotAvailable));
    }

    [Fact]
    public void A_pin_trusts_exactly_that_certificate_whatever_the_chain_and_refuses_any_other()
    {
        using X509Certificate2 pinned = SelfSigned();
        using X509Certificate2 other = SelfSigned();
        ServerCertificatePolicy policy = Policy(pinned.GetCertHashString(HashAlgorithmName.SHA256).ToLowerInvariant());

        Assert.Null(policy.Check("server.test", pinned, chain: null, SslPolicyErrors.RemoteCertificateChainErrors));
        string? refused = policy.Check("server.test", other, chain: null, SslPolicyErrors.None);
        Assert.Contains($"its SHA-256 fingerprint is {other.GetCertHashString(HashAlgorithmName.SHA256)}", refused, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("zz")]
    [InlineData("00:11")]
    public void A_pin_that_is_not_32_bytes_of_hex_is_refused(string text)
    {
        FormatException refused = Assert.Throws<FormatException>(() => ServerCertificatePolicy.ParsePin(text));
        Assert.Contains("64 hex digits", refused.Message, StringComparison.Ordinal);
    }
}
