using Microsoft.Extensions.Options;
using Tunnel2.Hosting.Admin;
using Tunnel2.Balancing;
using Tunnel2.Protocol.Handshake;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Relay.Shaping;
using Tunnel2.TunnelClient.Tls;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>Checks what data annotations cannot: URLs and backend lists, the session id's form, and the timers' order.</summary>
public sealed class TunnelClientOptionsValidator : IValidateOptions<TunnelClientOptions>
{
    public ValidateOptionsResult Validate(string? name, TunnelClientOptions options)
    {
        var failures = new List<string>();
        IReadOnlyList<Uri>? servers = ServerList.Parse(options.Server, out string? serverError);
        if (servers is null)
        {
            failures.Add($"TunnelClient:Server must be an http:// or https:// URL such as http://127.0.0.1:12001, or several separated by commas: {serverError}.");
        }

        if (options.HealthPath is { } healthPath && (!healthPath.StartsWith('/') || !Uri.TryCreate(healthPath, UriKind.Relative, out _)))
        {
            failures.Add($"TunnelClient:HealthPath must be a path on the backend starting with '/', such as /healthz, not '{healthPath}'.");
        }

        bool https = false;
        foreach (Uri server in servers ?? [])
        {
            https |= server.Scheme == Uri.UriSchemeHttps;
        }

        if (!string.IsNullOrEmpty(options.CaCertificate))
        {
            try
            {
                _ = ServerCertificatePolicy.ReadAuthorities(options.CaCertificate);
            }
            catch (InvalidDataException ex)
            {
                failures.Add($"TunnelClient:CaCertificate: {ex.Message}");
            }
        }

        if (!string.IsNullOrEmpty(options.ServerCertificateSha256))
        {
            try
            {
                _ = ServerCertificatePolicy.ParsePin(options.ServerCertificateSha256);
            }
            catch (FormatException ex)
            {
                failures.Add($"TunnelClient:ServerCertificateSha256: {ex.Message}");
            }
        }

        if (!https && (!string.IsNullOrEmpty(options.CaCertificate) || !string.IsNullOrEmpty(options.ServerCertificateSha256)))
        {
            failures.Add("--ca-certificate and --server-certificate-sha256 check an https:// server; TunnelClient:Server names none.");
        }

        if (BackendAddress.ParseList(options.Backend, out string? backendError) is null)
        {
            failures.Add($"TunnelClient:Backend must be an http:// or https:// URL, or several separated by commas, each optionally followed by weight=N: {backendError}");
        }

        if (HostHeaderPolicy.Parse(options.HostHeader, out string? hostHeaderError) is null)
        {
            failures.Add($"TunnelClient:HostHeader (--host-header): {hostHeaderError}.");
        }

        if (options.BackendAffinity == AffinityMode.Header && string.IsNullOrWhiteSpace(options.BackendAffinityHeader))
        {
            failures.Add("TunnelClient:BackendAffinity is Header but TunnelClient:BackendAffinityHeader names no header (--backend-affinity-header).");
        }

        failures.AddRange(AdminSettings.Problems(TunnelClientOptions.SectionName, options.AdminToken,
            (nameof(options.AdminUrl), "--admin-url", options.AdminUrl), (nameof(options.InspectUrl), "--inspect-url", options.InspectUrl)));

        if (options.BasicAuth is { } basic && basic.Split(':', 2) is not [{ Length: > 0 }, { Length: >= 8 }])
        {
            failures.Add("TunnelClient:BasicAuth must be user:password with a password of at least 8 characters (--basic-auth).");
        }

        foreach ((string setting, string? networks) in (ReadOnlySpan<(string, string?)>)[("CidrAllow", options.CidrAllow), ("CidrDeny", options.CidrDeny)])
        {
            if (networks is not null && !NetworkList.TryParse(networks, out _))
            {
                failures.Add($"TunnelClient:{setting} must be networks in CIDR form separated by commas, e.g. 10.0.0.0/8,2001:db8::/32.");
            }
        }

        if (!string.IsNullOrEmpty(options.Session) && !HandshakeProtocol.IsValidSessionId(options.Session))
        {
            failures.Add($"TunnelClient:Session '{options.Session}' must be 1 to 128 characters of A-Z a-z 0-9 - _ . ~, and not '.' or '..'.");
        }

        if (options.ReconnectMaxDelay < options.ReconnectMinDelay)
        {
            failures.Add("TunnelClient:ReconnectMaxDelay must not be shorter than ReconnectMinDelay.");
        }

        if (options.KeepAliveTimeout <= options.KeepAliveInterval)
        {
            failures.Add("TunnelClient:KeepAliveTimeout must be longer than KeepAliveInterval.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
