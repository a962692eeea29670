using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.Hosting.Admin;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>Checks what data annotations cannot: the URLs parse and the timers make sense together.</summary>
public sealed class TunnelServerOptionsValidator : IValidateOptions<TunnelServerOptions>
{
    public ValidateOptionsResult Validate(string? name, TunnelServerOptions options)
    {
        var failures = new List<string>();
        bool anyHttps = false;
        if (!ListenAddress.TryParse(options.PublicUrl, out ListenAddress? publicAddress, out string? publicError))
        {
            failures.Add($"TunnelServer:PublicUrl {publicError}");
        }
        else
        {
            anyHttps |= publicAddress.IsHttps;
        }

        if (!ListenAddress.TryParse(options.TunnelUrl, out ListenAddress? tunnelAddress, out string? tunnelError))
        {
            failures.Add($"TunnelServer:TunnelUrl {tunnelError}");
        }
        else
        {
            anyHttps |= tunnelAddress.IsHttps;
        }

        bool hasCertificate = !string.IsNullOrEmpty(options.Certificate);
        if (hasCertificate != !string.IsNullOrEmpty(options.CertificateKey))
        {
            failures.Add("TunnelServer:Certificate and TunnelServer:CertificateKey go together (--certificate and --certificate-key).");
        }
        else if (anyHttps && !hasCertificate)
        {
            failures.Add("An https:// PublicUrl or TunnelUrl needs a certificate: set --certificate and --certificate-key (PEM files).");
        }
        else if (hasCertificate && !anyHttps)
        {
            failures.Add("A certificate is set but no listener uses it: make PublicUrl and/or TunnelUrl https:// URLs.");
        }

        if (!string.IsNullOrEmpty(options.PublicH2cUrl))
        {
            if (!ListenAddress.TryParse(options.PublicH2cUrl, out ListenAddress? h2cAddress, out string? h2cError))
            {
                failures.Add($"TunnelServer:PublicH2cUrl {h2cError}");
            }
            else if (h2cAddress.IsHttps)
            {
                failures.Add("TunnelServer:PublicH2cUrl is for cleartext HTTP/2 (http://); an https:// PublicUrl offers HTTP/2 by ALPN.");
            }
        }

        if (string.IsNullOrEmpty(options.Token) && string.IsNullOrEmpty(options.CredentialsFile))
        {
            failures.Add("TunnelServer:Token or TunnelServer:CredentialsFile is required: one token for every client (--token, TunnelServer__Token) "
                         + "or a file of per-client credentials (--credentials); see docs/security.md.");
        }

        failures.AddRange(AdminSettings.Problems(TunnelServerOptions.SectionName, options.AdminUrl, options.AdminToken));

        if (options.CertificateAsk && string.IsNullOrEmpty(options.AdminUrl))
        {
            failures.Add("TunnelServer:CertificateAsk answers on the admin listener: set --admin-url too (e.g. http://127.0.0.1:12002).");
        }

        if (options.KeepAliveTimeout <= options.KeepAliveInterval)
        {
            failures.Add("TunnelServer:KeepAliveTimeout must be longer than TunnelServer:KeepAliveInterval.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
