using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Limits;
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
        AssertInvalid(new ServerUplinkOptions { MaxFramePayload = 1024 }, nameof(ServerUplinkOptions.MaxFramePayload));
        AssertInvalid(new ServerUplinkOptions { MaxFramePayload = 32 * 1024 * 1024 }, nameof(ServerUplinkOptions.MaxFramePayload));
        AssertInvalid(new ServerUplinkOptions { InitialStreamWindow = 1024 }, nameof(ServerUplinkOptions.InitialStreamWindow));
        AssertInvalid(new ServerUplinkOptions { MaxStreams = 0 }, nameof(ServerUplinkOptions.MaxStreams));
        AssertInvalid(new ServerUplinkOptions { ConnectionWindow = 1024 }, nameof(ServerUplinkOptions.ConnectionWindow));
        AssertInvalid(new ServerListenersOptions { UnsentBytesLimit = -1 }, nameof(ServerListenersOptions.UnsentBytesLimit));
        AssertInvalid(new ServerUplinkOptions { ReceiveBuffer = 128 * 1024 * 1024 }, nameof(ServerUplinkOptions.ReceiveBuffer));
        AssertInvalid(new ServerUplinkOptions { SegmentSize = 80 }, nameof(ServerUplinkOptions.SegmentSize));
        AssertInvalid(new ServerUplinkOptions { SegmentSize = 70_000 }, nameof(ServerUplinkOptions.SegmentSize));
        AssertInvalid(new ServerUplinkOptions { KeepAliveInterval = TimeSpan.FromMilliseconds(50) }, nameof(ServerUplinkOptions.KeepAliveInterval));
        AssertInvalid(new ServerUplinkOptions { KeepAliveTimeout = TimeSpan.FromHours(2) }, nameof(ServerUplinkOptions.KeepAliveTimeout));
    }

    [Fact]
    public void Client_options_with_session_and_token_are_valid()
    {
        Assert.Empty(Validate(new TunnelClientOptions { Session = "demo", Token = "t" }));
    }

    [Fact]
    public void Client_socket_settings_are_range_checked()
    {
        AssertInvalid(new ClientUplinkOptions { UnsentBytesLimit = -1 }, nameof(ClientUplinkOptions.UnsentBytesLimit));
        AssertInvalid(new ClientUplinkOptions { ReceiveBuffer = -1 }, nameof(ClientUplinkOptions.ReceiveBuffer));
        AssertInvalid(new ClientUplinkOptions { SegmentSize = 100 }, nameof(ClientUplinkOptions.SegmentSize));
        AssertInvalid(new ClientUplinkOptions { QueuedDataLimit = -1 }, nameof(ClientUplinkOptions.QueuedDataLimit));
        Assert.Empty(Validate(new TunnelClientOptions { Session = "demo", Token = "t", Uplink = { UnsentBytesLimit = 0, ReceiveBuffer = 0, SegmentSize = 0, QueuedDataLimit = 0 } }));
        Assert.Empty(Validate(new TunnelClientOptions { Session = "demo", Token = "t", Uplink = { SegmentSize = 536 } }));
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
        var options = new ClientUplinkOptions { Transport = transport };

        Assert.Equal(valid, !Validate(options).Exists(r => r.MemberNames.Contains(nameof(ClientUplinkOptions.Transport))));
    }

    [Fact]
    public void Client_limits_are_range_checked()
    {
        AssertInvalid(new ClientLimitsOptions { MaxConcurrency = 0 }, nameof(ClientLimitsOptions.MaxConcurrency));
        AssertInvalid(new ClientLimitsOptions { MaxQueue = -1 }, nameof(ClientLimitsOptions.MaxQueue));
        AssertInvalid(new ClientUplinkOptions { Count = 0 }, nameof(ClientUplinkOptions.Count));
        AssertInvalid(new ClientUplinkOptions { Count = 17 }, nameof(ClientUplinkOptions.Count));
        AssertInvalid(new ClientUplinkOptions { ReconnectMinDelay = TimeSpan.Zero }, nameof(ClientUplinkOptions.ReconnectMinDelay));
        AssertInvalid(new TunnelClientOptions { Session = "s", Token = "t", ConnectTimeout = TimeSpan.FromMinutes(11) }, nameof(TunnelClientOptions.ConnectTimeout));
        Assert.Empty(Validate(new TunnelClientOptions { Session = "s", Token = "t", Limits = { MaxQueue = 0 } }));
    }

    [Fact]
    public void Proxy_entry_options_are_range_checked()
    {
        Assert.Empty(Validate(new ProxyEntryOptions()));
        Assert.Empty(Validate(new ProxyEntryOptions { Limits = { MaxRequestBodySize = 0 } }));
        AssertInvalid(new ServerUplinkOptions { ResponseHeadTimeout = TimeSpan.FromMilliseconds(1) }, nameof(ServerUplinkOptions.ResponseHeadTimeout));
        AssertInvalid(new RequestLimitsOptions { MaxRequestBodySize = -1 }, nameof(RequestLimitsOptions.MaxRequestBodySize));
        AssertInvalid(new ProxyEntryOptions { RetryAfterSeconds = 0 }, nameof(ProxyEntryOptions.RetryAfterSeconds));
        Assert.Empty(Validate(new ProxyEntryOptions { WarmUp = TimeSpan.FromMinutes(10) }));
        AssertInvalid(new ProxyEntryOptions { WarmUp = TimeSpan.FromMinutes(11) }, nameof(ProxyEntryOptions.WarmUp));
        AssertInvalid(new ProxyEntryOptions { WarmUp = TimeSpan.FromSeconds(-1) }, nameof(ProxyEntryOptions.WarmUp));
        AssertInvalid(new BalancingOptions { EjectAfter = -1 }, nameof(BalancingOptions.EjectAfter));
        AssertInvalid(new BalancingOptions { AffinityCookie = "bad cookie" }, nameof(BalancingOptions.AffinityCookie));
        AssertInvalid(new BalancingOptions { EjectionBackoff = TimeSpan.Zero }, nameof(BalancingOptions.EjectionBackoff));
    }
}
