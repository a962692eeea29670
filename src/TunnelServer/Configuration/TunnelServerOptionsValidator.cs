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
        if (!ListenAddress.TryParse(options.Listeners.PublicUrl, out ListenAddress? publicAddress, out string? publicError))
        {
            failures.Add($"TunnelServer:Listeners:PublicUrl {publicError}");
        }
        else
        {
            anyHttps |= publicAddress.IsHttps;
        }

        if (!ListenAddress.TryParse(options.Listeners.TunnelUrl, out ListenAddress? tunnelAddress, out string? tunnelError))
        {
            failures.Add($"TunnelServer:Listeners:TunnelUrl {tunnelError}");
        }
        else
        {
            anyHttps |= tunnelAddress.IsHttps;
        }

        bool hasCertificate = !string.IsNullOrEmpty(options.Tls.Certificate);
        if (hasCertificate != !string.IsNullOrEmpty(options.Tls.CertificateKey))
        {
            failures.Add("TunnelServer:Tls:Certificate and TunnelServer:Tls:CertificateKey go together (--certificate and --certificate-key).");
        }
        else if (anyHttps && !hasCertificate)
        {
            failures.Add("An https:// public or tunnel URL needs a certificate: set --certificate and --certificate-key (PEM files).");
        }
        else if (hasCertificate && !anyHttps)
        {
            failures.Add("A certificate is set but no listener uses it: make TunnelServer:Listeners:PublicUrl and/or TunnelUrl https:// URLs.");
        }

        if (!string.IsNullOrEmpty(options.Listeners.PublicH2cUrl))
        {
            if (!ListenAddress.TryParse(options.Listeners.PublicH2cUrl, out ListenAddress? h2cAddress, out string? h2cError))
            {
                failures.Add($"TunnelServer:Listeners:PublicH2cUrl {h2cError}");
            }
            else if (h2cAddress.IsHttps)
            {
                failures.Add("TunnelServer:Listeners:PublicH2cUrl is for cleartext HTTP/2 (http://); an https:// public URL offers HTTP/2 by ALPN.");
            }
        }

        if (string.IsNullOrEmpty(options.Token) && string.IsNullOrEmpty(options.CredentialsFile))
        {
            failures.Add("TunnelServer:Token or TunnelServer:CredentialsFile is required: one token for every client (--token, TunnelServer__Token) "
                         + "or a file of per-client credentials (--credentials); see docs/security.md.");
        }

        failures.AddRange(AdminSettings.Problems(TunnelServerOptions.SectionName, options.Admin.Url, options.Admin.Token));

        if (options.Admin.CertificateAsk && string.IsNullOrEmpty(options.Admin.Url))
        {
            failures.Add("TunnelServer:Admin:CertificateAsk answers on the admin listener: set --admin-url too (e.g. http://127.0.0.1:12002).");
        }

        if (options.Uplink.KeepAliveTimeout <= options.Uplink.KeepAliveInterval)
        {
            failures.Add("TunnelServer:Uplink:KeepAliveTimeout must be longer than TunnelServer:Uplink:KeepAliveInterval.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
