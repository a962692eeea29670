using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.UnitTests.Configuration;

/// <summary>The data annotations the hosts validate at start (GeneratedOptionsValidatorTests: the validators they run), checked with <see cref="Validator"/>.</summary>
public sealed class OptionsAnnotationsTests
{
    private static List<ValidationResult> Validate(object options)
    {
        var results = new List<ValidationResult>();
        Validator.TryValidateObject(options, new ValidationContext(options), results, validateAllProperties: true);
        return results;
    }

    private static void AssertInvalid(object options, string member)
    {
        List<ValidationResult> results = Validate(options);
        Assert.Contains(results, r => r.MemberNames.Contains(member));
    }

    [Fact]
    public void Server_options_with_a_token_are_valid()
    {
        Assert.Empty(Validate(new TunnelServerOptions { Token = "12345678" }));
    }

    [Fact]
    public void Server_options_need_a_token_or_a_credentials_file()
    {
        var validator = new TunnelServerOptionsValidator();

        ValidateOptionsResult neither = validator.Validate(null, new TunnelServerOptions());

        Assert.True(neither.Failed);
        Assert.Contains(neither.Failures, failure => failure.Contains("TunnelServer:Token or TunnelServer:CredentialsFile is required", StringComparison.Ordinal));
        Assert.True(validator.Validate(null, new TunnelServerOptions { CredentialsFile = "credentials.json" }).Succeeded);
        Assert.True(validator.Validate(null, new TunnelServerOptions { Token = "12345678" }).Succeeded);
    }

    [Fact]
    public void A_token_shorter_than_8_characters_is_invalid()
    {
        List<ValidationResult> results = Validate(new TunnelServerOptions { Token = "1234567" });

        Assert.Contains("at least 8", Assert.Single(results).ErrorMessage, StringComparison.Ordinal);
    }

    [Fact]
    public void Server_limits_are_range_checked()
    {
        AssertInvalid(new TunnelServerOptions { Token = "12345678", MaxFramePayload = 1024 }, nameof(TunnelServerOptions.MaxFramePayload));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", MaxFramePayload = 32 * 1024 * 1024 }, nameof(TunnelServerOptions.MaxFramePayload));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", InitialStreamWindow = 1024 }, nameof(TunnelServerOptions.InitialStreamWindow));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", MaxStreamsPerUplink = 0 }, nameof(TunnelServerOptions.MaxStreamsPerUplink));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", ConnectionWindow = 1024 }, nameof(TunnelServerOptions.ConnectionWindow));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", UnsentBytesLimit = -1 }, nameof(TunnelServerOptions.UnsentBytesLimit));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", UplinkReceiveBuffer = 128 * 1024 * 1024 }, nameof(TunnelServerOptions.UplinkReceiveBuffer));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", UplinkSegmentSize = 80 }, nameof(TunnelServerOptions.UplinkSegmentSize));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", UplinkSegmentSize = 70_000 }, nameof(TunnelServerOptions.UplinkSegmentSize));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", KeepAliveInterval = TimeSpan.FromMilliseconds(50) }, nameof(TunnelServerOptions.KeepAliveInterval));
        AssertInvalid(new TunnelServerOptions { Token = "12345678", KeepAliveTimeout = TimeSpan.FromHours(2) }, nameof(TunnelServerOptions.KeepAliveTimeout));
    }

    [Fact]
    public void Client_options_with_session_and_token_are_valid()
    {
        Assert.Empty(Validate(new TunnelClientOptions { Session = "demo", Token = "t" }));
    }

    [Fact]
    public void Client_socket_settings_are_range_checked()
    {
        AssertInvalid(new TunnelClientOptions { Session = "demo", Token = "t", UnsentBytesLimit = -1 }, nameof(TunnelClientOptions.UnsentBytesLimit));
        AssertInvalid(new TunnelClientOptions { Session = "demo", Token = "t", UplinkReceiveBuffer = -1 }, nameof(TunnelClientOptions.UplinkReceiveBuffer));
        AssertInvalid(new TunnelClientOptions { Session = "demo", Token = "t", UplinkSegmentSize = 100 }, nameof(TunnelClientOptions.UplinkSegmentSize));
        AssertInvalid(new TunnelClientOptions { Session = "demo", Token = "t", QueuedDataLimit = -1 }, nameof(TunnelClientOptions.QueuedDataLimit));
        Assert.Empty(Validate(new TunnelClientOptions { Session = "demo", Token = "t", UnsentBytesLimit = 0, UplinkReceiveBuffer = 0, UplinkSegmentSize = 0, QueuedDataLimit = 0 }));
        Assert.Empty(Validate(new TunnelClientOptions { Session = "demo", Token = "t", UplinkSegmentSize = 536 }));
    }

    [Fact]
    public void Client_options_need_a_session_and_a_token()
    {
        List<ValidationResult> results = Validate(new TunnelClientOptions());

        Assert.Contains(results, r => r.MemberNames.Contains(nameof(TunnelClientOptions.Session)));
        Assert.Contains(results, r => r.MemberNames.Contains(nameof(TunnelClientOptions.Token)));
    }

    [Theory]
    [InlineData("upgrade", true)]
    [InlineData("websocket", true)]
    [InlineData("WebSocket", false)]
    [InlineData("tcp", false)]
    [InlineData("", false)]
    public void The_client_transport_is_upgrade_or_websocket(string transport, bool valid)
    {
        var options = new TunnelClientOptions { Session = "s", Token = "t", Transport = transport };

        Assert.Equal(valid, !Validate(options).Exists(r => r.MemberNames.Contains(nameof(TunnelClientOptions.Transport))));
    }

    [Fact]
    public void Client_limits_are_range_checked()
    {
        AssertInvalid(new TunnelClientOptions { Session = "s", Token = "t", MaxConcurrency = 0 }, nameof(TunnelClientOptions.MaxConcurrency));
        AssertInvalid(new TunnelClientOptions { Session = "s", Token = "t", MaxQueue = -1 }, nameof(TunnelClientOptions.MaxQueue));
        AssertInvalid(new TunnelClientOptions { Session = "s", Token = "t", Uplinks = 0 }, nameof(TunnelClientOptions.Uplinks));
        AssertInvalid(new TunnelClientOptions { Session = "s", Token = "t", Uplinks = 17 }, nameof(TunnelClientOptions.Uplinks));
        AssertInvalid(new TunnelClientOptions { Session = "s", Token = "t", ReconnectMinDelay = TimeSpan.Zero }, nameof(TunnelClientOptions.ReconnectMinDelay));
        AssertInvalid(new TunnelClientOptions { Session = "s", Token = "t", ConnectTimeout = TimeSpan.FromMinutes(11) }, nameof(TunnelClientOptions.ConnectTimeout));
        Assert.Empty(Validate(new TunnelClientOptions { Session = "s", Token = "t", MaxQueue = 0 }));
    }

    [Fact]
    public void Proxy_entry_options_are_range_checked()
    {
        Assert.Empty(Validate(new ProxyEntryOptions()));
        Assert.Empty(Validate(new ProxyEntryOptions { MaxRequestBodySize = 0 }));
        AssertInvalid(new ProxyEntryOptions { ResponseHeadTimeout = TimeSpan.FromMilliseconds(1) }, nameof(ProxyEntryOptions.ResponseHeadTimeout));
        AssertInvalid(new ProxyEntryOptions { MaxRequestBodySize = -1 }, nameof(ProxyEntryOptions.MaxRequestBodySize));
        AssertInvalid(new ProxyEntryOptions { RetryAfterSeconds = 0 }, nameof(ProxyEntryOptions.RetryAfterSeconds));
        Assert.Empty(Validate(new ProxyEntryOptions { WarmUp = TimeSpan.FromMinutes(10) }));
        AssertInvalid(new ProxyEntryOptions { WarmUp = TimeSpan.FromMinutes(11) }, nameof(ProxyEntryOptions.WarmUp));
        AssertInvalid(new ProxyEntryOptions { WarmUp = TimeSpan.FromSeconds(-1) }, nameof(ProxyEntryOptions.WarmUp));
        AssertInvalid(new BalancingOptions { EjectAfter = -1 }, nameof(BalancingOptions.EjectAfter));
        AssertInvalid(new BalancingOptions { AffinityCookie = "bad cookie" }, nameof(BalancingOptions.AffinityCookie));
        AssertInvalid(new BalancingOptions { EjectionBackoff = TimeSpan.Zero }, nameof(BalancingOptions.EjectionBackoff));
    }
}
