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
        bool anyHttps = ValidateListener("PublicUrl", options.Listeners.PublicUrl, failures);
        anyHttps |= ValidateListener("TunnelUrl", options.Listeners.TunnelUrl, failures);
        ValidateCertificate(options, anyHttps, failures);
        ValidateH2c(options, failures);
        ValidateAccess(options, failures);
        if (options.Uplink.KeepAliveTimeout <= options.Uplink.KeepAliveInterval)
        {
            failures.Add("TunnelServer:Uplink:KeepAliveTimeout must be longer than TunnelServer:Uplink:KeepAliveInterval.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    /// <returns>Whether the listener is an https:// one (false when it does not parse).</returns>
    private static bool ValidateListener(string key, string url, List<string> failures)
    {
        if (!ListenAddress.TryParse(url, out ListenAddress? address, out string? error))
        {
            failures.Add($"TunnelServer:Listeners:{key} {error}");
            return false;
        }

        return address.IsHttps;
    }

    /// <summary>The certificate and its key go together, and are set exactly when a listener is https://.</summary>
    private static void ValidateCertificate(TunnelServerOptions options, bool anyHttps, List<string> failures)
    {
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
    }

    private static void ValidateH2c(TunnelServerOptions options, List<string> failures)
    {
        if (string.IsNullOrEmpty(options.Listeners.PublicH2cUrl))
        {
            return;
        }

        if (!ListenAddress.TryParse(options.Listeners.PublicH2cUrl, out ListenAddress? h2cAddress, out string? h2cError))
        {
            failures.Add($"TunnelServer:Listeners:PublicH2cUrl {h2cError}");
        }
        else if (h2cAddress.IsHttps)
        {
            failures.Add("TunnelServer:Listeners:PublicH2cUrl is for cleartext HTTP/2 (http://); an https:// public URL offers HTTP/2 by ALPN.");
        }
    }

    /// <summary>Clients need a token or a credentials file; the admin listener its token; the certificate ask the admin listener.</summary>
    private static void ValidateAccess(TunnelServerOptions options, List<string> failures)
    {
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
    }
}
