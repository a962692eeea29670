using Microsoft.Extensions.Options;

namespace Tunnel2.TunnelServer.Configuration;

/// <summary>Checks what data annotations cannot: the URLs parse and the timers make sense together.</summary>
public sealed class TunnelServerOptionsValidator : IValidateOptions<TunnelServerOptions>
{
    public ValidateOptionsResult Validate(string? name, TunnelServerOptions options)
    {
        var failures = new List<string>();
        if (!ListenAddress.TryParse(options.PublicUrl, out _, out string? publicError))
        {
            failures.Add($"TunnelServer:PublicUrl {publicError}");
        }

        if (!ListenAddress.TryParse(options.TunnelUrl, out _, out string? tunnelError))
        {
            failures.Add($"TunnelServer:TunnelUrl {tunnelError}");
        }

        if (options.KeepAliveTimeout <= options.KeepAliveInterval)
        {
            failures.Add("TunnelServer:KeepAliveTimeout must be longer than TunnelServer:KeepAliveInterval.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
