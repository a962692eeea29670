using Microsoft.Extensions.Options;
using Tunnel2.Hosting.Admin;
using Tunnel2.Balancing;
using Tunnel2.Protocol.Handshake;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Relay.Shaping;
using Tunnel2.TunnelClient.Tls;

namespace Tunnel2.TunnelClient;

/// <summary>Checks what data annotations cannot: URLs and backend lists, the session id's form, and the timers' order.</summary>
public sealed class TunnelClientOptionsValidator : IValidateOptions<TunnelClientOptions>
{
    public ValidateOptionsResult Validate(string? name, TunnelClientOptions options)
    {
        var failures = new List<string>();
        IReadOnlyList<Uri>? servers = ValidateServers(options, failures);
        ValidateHealthPath(options, failures);
        ValidateTls(options, servers, failures);
        ValidateBackends(options, failures);
        failures.AddRange(AdminSettings.Problems(TunnelClientOptions.SectionName, options.Admin.Token,
            ("Admin:Url", "--admin-url", options.Admin.Url), ("Inspector:Url", "--inspect-url", options.Inspector.Url)));
        ValidateVisitors(options, failures);
        ValidateSessionAndTimers(options, failures);
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static IReadOnlyList<Uri>? ValidateServers(TunnelClientOptions options, List<string> failures)
    {
        IReadOnlyList<Uri>? servers = ServerList.Parse(options.Server, out string? serverError);
        if (servers is null)
        {
            failures.Add($"TunnelClient:Server must be an http:// or https:// URL such as http://127.0.0.1:12001, or several separated by commas: {serverError}.");
        }

        return servers;
    }

    private static void ValidateHealthPath(TunnelClientOptions options, List<string> failures)
    {
        if (options.Health.Path is { } healthPath && (!healthPath.StartsWith('/') || !Uri.TryCreate(healthPath, UriKind.Relative, out _)))
        {
            failures.Add($"TunnelClient:Health:Path must be a path on the backend starting with '/', such as /healthz, not '{healthPath}'.");
        }
    }

    /// <summary>The CA file and the pin must read, and they need an https:// server to check.</summary>
    private static void ValidateTls(TunnelClientOptions options, IReadOnlyList<Uri>? servers, List<string> failures)
    {
        bool https = false;
        foreach (Uri server in servers ?? [])
        {
            https |= server.Scheme == Uri.UriSchemeHttps;
        }

        if (!string.IsNullOrEmpty(options.Tls.CaCertificate))
        {
            try
            {
                _ = ServerCertificatePolicy.ReadAuthorities(options.Tls.CaCertificate);
            }
            catch (InvalidDataException ex)
            {
                failures.Add($"TunnelClient:Tls:CaCertificate: {ex.Message}");
            }
        }

        if (!string.IsNullOrEmpty(options.Tls.ServerCertificateSha256))
        {
            try
            {
                _ = ServerCertificatePolicy.ParsePin(options.Tls.ServerCertificateSha256);
            }
            catch (FormatException ex)
            {
                failures.Add($"TunnelClient:Tls:ServerCertificateSha256: {ex.Message}");
            }
        }

        if (!https && (!string.IsNullOrEmpty(options.Tls.CaCertificate) || !string.IsNullOrEmpty(options.Tls.ServerCertificateSha256)))
        {
            failures.Add("--ca-certificate and --server-certificate-sha256 check an https:// server; TunnelClient:Server names none.");
        }
    }

    private static void ValidateBackends(TunnelClientOptions options, List<string> failures)
    {
        if (BackendAddress.ParseList(options.Backends.Urls, out string? backendError) is null)
        {
            failures.Add($"TunnelClient:Backends:Urls must be an http:// or https:// URL, or several separated by commas, each optionally followed by weight=N: {backendError}");
        }

        if (HostHeaderPolicy.Parse(options.Backends.HostHeader, out string? hostHeaderError) is null)
        {
            failures.Add($"TunnelClient:Backends:HostHeader (--host-header): {hostHeaderError}.");
        }

        if (options.Backends.Affinity == AffinityMode.Header && string.IsNullOrWhiteSpace(options.Backends.AffinityHeader))
        {
            failures.Add("TunnelClient:Backends:Affinity is Header but TunnelClient:Backends:AffinityHeader names no header (--backend-affinity-header).");
        }
    }

    private static void ValidateVisitors(TunnelClientOptions options, List<string> failures)
    {
        if (options.Visitors.BasicAuth is { } basic && basic.Split(':', 2) is not [{ Length: > 0 }, { Length: >= 8 }])
        {
            failures.Add("TunnelClient:Visitors:BasicAuth must be user:password with a password of at least 8 characters (--basic-auth).");
        }

        foreach ((string setting, string? networks) in (ReadOnlySpan<(string, string?)>)[("Visitors:CidrAllow", options.Visitors.CidrAllow), ("Visitors:CidrDeny", options.Visitors.CidrDeny)])
        {
            if (networks is not null && !NetworkList.TryParse(networks, out _))
            {
                failures.Add($"TunnelClient:{setting} must be networks in CIDR form separated by commas, e.g. 10.0.0.0/8,2001:db8::/32.");
            }
        }
    }

    private static void ValidateSessionAndTimers(TunnelClientOptions options, List<string> failures)
    {
        if (!string.IsNullOrEmpty(options.Session) && !HandshakeProtocol.IsValidSessionId(options.Session))
        {
            failures.Add($"TunnelClient:Session '{options.Session}' must be 1 to 128 characters of A-Z a-z 0-9 - _ . ~, and not '.' or '..'.");
        }

        if (options.Uplink.ReconnectMaxDelay < options.Uplink.ReconnectMinDelay)
        {
            failures.Add("TunnelClient:Uplink:ReconnectMaxDelay must not be shorter than ReconnectMinDelay.");
        }

        if (options.Uplink.KeepAliveTimeout <= options.Uplink.KeepAliveInterval)
        {
            failures.Add("TunnelClient:Uplink:KeepAliveTimeout must be longer than KeepAliveInterval.");
        }
    }
}
