using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Handshake;

namespace Tunnel2.TunnelClient.Configuration;

/// <summary>Checks what data annotations cannot: URLs, the session id's form, and the timers' order.</summary>
public sealed class TunnelClientOptionsValidator : IValidateOptions<TunnelClientOptions>
{
    public ValidateOptionsResult Validate(string? name, TunnelClientOptions options)
    {
        var failures = new List<string>();
        if (!Uri.TryCreate(options.Server, UriKind.Absolute, out Uri? server) || server.Scheme != Uri.UriSchemeHttp)
        {
            failures.Add($"TunnelClient:Server must be an http:// URL such as http://127.0.0.1:12001, not '{options.Server}'.");
        }

        if (!Uri.TryCreate(options.Backend, UriKind.Absolute, out Uri? backend)
            || (backend.Scheme != Uri.UriSchemeHttp && backend.Scheme != Uri.UriSchemeHttps))
        {
            failures.Add($"TunnelClient:Backend must be an http:// or https:// URL, not '{options.Backend}'.");
        }

        if (!string.IsNullOrEmpty(options.Session) && !HandshakeProtocol.IsValidSessionId(options.Session))
        {
            failures.Add($"TunnelClient:Session '{options.Session}' must be 1 to 128 characters of A-Z a-z 0-9 - _ . ~.");
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
