using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.UnitTests.Configuration;

/// <summary>
/// The build-time validators the hosts register instead of ValidateDataAnnotations (so that a Native AOT build
/// validates like the JIT build): they must check the same annotations that OptionsAnnotationsTests checks.
/// </summary>
public sealed class GeneratedOptionsValidatorTests
{
    private static void AssertFailsOn(ValidateOptionsResult result, string member)
    {
        Assert.True(result.Failed);
        Assert.Contains(result.Failures!, failure => failure.Contains(member, StringComparison.Ordinal));
    }

    [Fact]
    public void Client_annotations_are_checked()
    {
        var validator = new TunnelClientOptionsAnnotations();

        Assert.True(validator.Validate(null, new TunnelClientOptions { Session = "s", Token = "t" }).Succeeded);
        AssertFailsOn(validator.Validate(null, new TunnelClientOptions { Token = "t" }), nameof(TunnelClientOptions.Session));
        AssertFailsOn(validator.Validate(null, new TunnelClientOptions { Session = "s", Token = "t", Limits = { MaxConcurrency = 0 } }),
            nameof(ClientLimitsOptions.MaxConcurrency));
        AssertFailsOn(validator.Validate(null, new TunnelClientOptions { Session = "s", Token = "t", ConnectTimeout = TimeSpan.FromMinutes(11) }),
            nameof(TunnelClientOptions.ConnectTimeout));
        AssertFailsOn(validator.Validate(null, new TunnelClientOptions { Session = "s", Token = "t", Uplink = { Transport = "tcp" } }),
            nameof(ClientUplinkOptions.Transport));
    }

    [Fact]
    public void Server_annotations_are_checked()
    {
        var validator = new TunnelServerOptionsAnnotations();

        Assert.True(validator.Validate(null, new TunnelServerOptions { Token = "12345678" }).Succeeded);
        ValidateOptionsResult shortToken = validator.Validate(null, new TunnelServerOptions { Token = "1234567" });
        Assert.Contains(shortToken.Failures!, failure => failure.Contains("at least 8", StringComparison.Ordinal));
        AssertFailsOn(validator.Validate(null, new TunnelServerOptions { Token = "12345678", Uplink = { KeepAliveTimeout = TimeSpan.FromHours(2) } }),
            nameof(ServerUplinkOptions.KeepAliveTimeout));
        AssertFailsOn(validator.Validate(null, new TunnelServerOptions { Token = "12345678", Uplink = { MaxFramePayload = 1024 } }),
            nameof(ServerUplinkOptions.MaxFramePayload));
    }

    [Fact]
    public void Proxy_entry_annotations_are_checked()
    {
        var validator = new ProxyEntryOptionsAnnotations();

        Assert.True(validator.Validate(null, new ProxyEntryOptions()).Succeeded);
        AssertFailsOn(validator.Validate(null, new ProxyEntryOptions { Limits = { MaxRequestHeadersBytes = 10 } }),
            nameof(RequestLimitsOptions.MaxRequestHeadersBytes));
        AssertFailsOn(validator.Validate(null, new ProxyEntryOptions { RetryAfterSeconds = 0 }), nameof(ProxyEntryOptions.RetryAfterSeconds));

        // The nested balancing section is validated too ([ValidateObjectMembers]).
        AssertFailsOn(validator.Validate(null, new ProxyEntryOptions { Balancing = { EjectAfter = -1 } }), "EjectAfter");
        AssertFailsOn(validator.Validate(null, new ProxyEntryOptions { Balancing = { AffinityCookie = "bad cookie" } }), "AffinityCookie");
    }
}
