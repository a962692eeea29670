using System.Globalization;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.TunnelClient.Tls;

/// <summary>
/// Whether the client trusts the certificate of an <c>https://</c> server, and if not, why, in words a user can act on.
/// By default the system's trust store decides (and the name must match the URL's host). <c>--ca-certificate</c>
/// trusts the CAs in a PEM file instead, for a private CA. <c>--server-certificate-sha256</c> pins the server's exact
/// certificate: a matching one is trusted whoever signed it (a self-signed one too), any other is refused.
/// </summary>
public sealed class ServerCertificatePolicy
{
    private readonly X509Certificate2Collection? _authorities;
    private readonly byte[]? _pin;

    public ServerCertificatePolicy(TunnelClientOptions options)
    {
        _authorities = string.IsNullOrEmpty(options.Tls.CaCertificate) ? null : ReadAuthorities(options.Tls.CaCertificate);
        _pin = string.IsNullOrEmpty(options.Tls.ServerCertificateSha256) ? null : ParsePin(options.Tls.ServerCertificateSha256);
    }

    /// <summary>The CA certificates in a PEM file.</summary>
    /// <exception cref="InvalidDataException">The file cannot be read or holds no certificate; the message says which.</exception>
    public static X509Certificate2Collection ReadAuthorities(string path)
    {
        var authorities = new X509Certificate2Collection();
        try
        {
            authorities.ImportFromPemFile(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or CryptographicException)
        {
            throw new InvalidDataException($"The CA certificate file '{path}' cannot be read: {ex.Message}", ex);
        }

        return authorities.Count > 0 ? authorities : throw new InvalidDataException($"The CA certificate file '{path}' holds no PEM certificate.");
    }

    /// <summary>A SHA-256 fingerprint as 64 hex digits, with or without colons (as <c>openssl x509 -fingerprint -sha256</c> prints it).</summary>
    /// <exception cref="FormatException">Not 32 bytes of hex.</exception>
    public static byte[] ParsePin(string text)
    {
        string hex = text.Replace(":", string.Empty, StringComparison.Ordinal).Trim();
        try
        {
            byte[] pin = Convert.FromHexString(hex);
            return pin.Length == SHA256.HashSizeInBytes ? pin : throw new FormatException();
        }
        catch (FormatException)
        {
            throw new FormatException($"'{text}' is not a SHA-256 fingerprint (64 hex digits, colons allowed).");
        }
    }

    /// <summary>
    /// TLS options for a connection to <paramref name="host"/>; when the certificate is refused, <paramref name="refused"/>
    /// is told why before the handshake fails.
    /// </summary>
    public SslClientAuthenticationOptions CreateOptions(string host, Action<string> refused)
    {
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = host,
            ApplicationProtocols = [SslApplicationProtocol.Http11],
            RemoteCertificateValidationCallback = (_, certificate, chain, errors) =>
            {
                string? reason = Check(host, certificate, chain, errors);
                if (reason is not null)
                {
                    refused(reason);
                }

                return reason is null;
            },
        };
        if (_authorities is not null)
        {
            var chainPolicy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
            chainPolicy.CustomTrustStore.AddRange(_authorities);
            options.CertificateChainPolicy = chainPolicy;
        }

        return options;
    }

    /// <summary>Null when the certificate is trusted; else why not.</summary>
    internal string? Check(string host, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        if (certificate is null)
        {
            return "the server sent no certificate";
        }

        if (_pin is not null)
        {
            byte[] actual = SHA256.HashData(certificate.GetRawCertData());
            return CryptographicOperations.FixedTimeEquals(actual, _pin)
                ? null
                : $"its SHA-256 fingerprint is {Convert.ToHexString(actual)}, not the pinned {Convert.ToHexString(_pin)} (--server-certificate-sha256)";
        }

        if (errors == SslPolicyErrors.None)
        {
            return null;
        }

        var reason = new StringBuilder();
        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch))
        {
            reason.Append(CultureInfo.InvariantCulture, $"it is not issued for '{host}' (subject {certificate.Subject})");
        }

        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateChainErrors))
        {
            if (reason.Length > 0)
            {
                reason.Append("; ");
            }

            reason.Append(DescribeChain(chain));
            reason.Append(_authorities is null
                ? "; trust its CA with --ca-certificate <pem>, or pin it with --server-certificate-sha256"
                : "; it does not chain to a CA in --ca-certificate");
        }

        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable) && reason.Length == 0)
        {
            reason.Append("the server sent no certificate");
        }

        return reason.ToString();
    }

    private static string DescribeChain(X509Chain? chain)
    {
        if (chain is null || chain.ChainStatus.Length == 0)
        {
            return "its chain cannot be built";
        }

        var statuses = new List<string>(chain.ChainStatus.Length);
        foreach (X509ChainStatus status in chain.ChainStatus)
        {
            statuses.Add($"{status.Status} ({status.StatusInformation.Trim()})");
        }

        return $"its chain is not trusted: {string.Join(", ", statuses)}";
    }
}
