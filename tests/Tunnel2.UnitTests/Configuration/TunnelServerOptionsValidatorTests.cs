using Microsoft.Extensions.Options;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.UnitTests.Configuration;

public sealed class TunnelServerOptionsValidatorTests
{
    private static TunnelServerOptions Valid() => new() { Token = "a-good-token" };

    private static ValidateOptionsResult Validate(TunnelServerOptions options) => new TunnelServerOptionsValidator().Validate(null, options);

    [Fact]
    public void The_defaults_with_a_token_are_valid()
    {
        Assert.True(Validate(Valid()).Succeeded);
    }

    [Theory]
    [InlineData("not a url")]
    [InlineData("")]
    [InlineData("ws://127.0.0.1:12000")]
    [InlineData("http://127.0.0.1:12000/path")]
    [InlineData("http://127.0.0.1:12000/tunnel/")]
    [InlineData("http://example.com:12000")]
    [InlineData("127.0.0.1:12000")]
    public void A_bad_public_url_is_reported_by_name(string url)
    {
        TunnelServerOptions options = Valid();
        options.Listeners.PublicUrl = url;

        ValidateOptionsResult result = Validate(options);

        Assert.True(result.Failed);
        string failure = Assert.Single(result.Failures!);
        Assert.StartsWith("TunnelServer:Listeners:PublicUrl", failure, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("https://127.0.0.1:12000", "http://127.0.0.1:12001", null, null, "needs a certificate")]
    [InlineData("http://127.0.0.1:12000", "https://127.0.0.1:12001", null, null, "needs a certificate")]
    [InlineData("http://127.0.0.1:12000", "http://127.0.0.1:12001", "cert.pem", "key.pem", "no listener uses it")]
    [InlineData("https://127.0.0.1:12000", "http://127.0.0.1:12001", "cert.pem", null, "go together")]
    public void TLS_settings_that_do_not_fit_together_are_refused_with_the_fix(string publicUrl, string tunnelUrl, string? certificate, string? key, string reason)
    {
        TunnelServerOptions options = Valid();
        options.Listeners.PublicUrl = publicUrl;
        options.Listeners.TunnelUrl = tunnelUrl;
        options.Tls.Certificate = certificate;
        options.Tls.CertificateKey = key;

        Assert.Contains(reason, Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Fact]
    public void An_https_url_with_a_certificate_and_an_h2c_port_is_valid_and_an_https_h2c_port_is_not()
    {
        TunnelServerOptions options = Valid();
        options.Listeners.PublicUrl = "https://0.0.0.0:443";
        options.Tls.Certificate = "cert.pem";
        options.Tls.CertificateKey = "key.pem";
        options.Listeners.PublicH2cUrl = "http://127.0.0.1:12002";
        Assert.True(Validate(options).Succeeded);

        options.Listeners.PublicH2cUrl = "https://127.0.0.1:12002";
        Assert.Contains("cleartext", Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Fact]
    public void A_bad_tunnel_url_is_reported_by_name()
    {
        TunnelServerOptions options = Valid();
        options.Listeners.TunnelUrl = "ftp://0.0.0.0:12001";

        ValidateOptionsResult result = Validate(options);

        Assert.StartsWith("TunnelServer:Listeners:TunnelUrl", Assert.Single(result.Failures!), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(15_000, 15_000)]
    [InlineData(15_000, 10_000)]
    public void A_keep_alive_timeout_not_longer_than_the_interval_is_refused(int intervalMs, int timeoutMs)
    {
        TunnelServerOptions options = Valid();
        options.Uplink.KeepAliveInterval = TimeSpan.FromMilliseconds(intervalMs);
        options.Uplink.KeepAliveTimeout = TimeSpan.FromMilliseconds(timeoutMs);

        ValidateOptionsResult result = Validate(options);

        Assert.Contains("KeepAliveTimeout", Assert.Single(result.Failures!), StringComparison.Ordinal);
    }

    [Fact]
    public void Every_problem_is_reported_at_once()
    {
        TunnelServerOptions options = Valid();
        options.Listeners.PublicUrl = "nope";
        options.Listeners.TunnelUrl = "nope";
        options.Uplink.KeepAliveTimeout = TimeSpan.Zero;

        Assert.Equal(3, Validate(options).Failures!.Count());
    }

    [Fact]
    public void ToUplinkSettings_carries_every_limit()
    {
        var options = new TunnelServerOptions
        {
            Token = "a-good-token",
            Uplink = { MaxFramePayload = 32 * 1024, InitialStreamWindow = 128 * 1024, MaxStreams = 77, KeepAliveInterval = TimeSpan.FromSeconds(2), KeepAliveTimeout = TimeSpan.FromSeconds(7) },
        };

        Tunnel2.Protocol.Multiplexing.UplinkSettings settings = options.ToUplinkSettings();

        Assert.Equal(32 * 1024, settings.MaxFramePayload);
        Assert.Equal(128 * 1024, settings.InitialStreamWindow);
        Assert.Equal(77, settings.MaxConcurrentStreams);
        Assert.Equal(TimeSpan.FromSeconds(2), settings.KeepAliveInterval);
        Assert.Equal(TimeSpan.FromSeconds(7), settings.KeepAliveTimeout);
    }

    [Fact]
    public void The_certificate_ask_needs_the_admin_listener()
    {
        TunnelServerOptions options = Valid();
        options.Admin.CertificateAsk = true;

        string failure = Assert.Single(Validate(options).Failures!);
        Assert.Contains("--admin-url", failure, StringComparison.Ordinal);

        options.Admin.Url = "http://127.0.0.1:12002";
        Assert.True(Validate(options).Succeeded);
    }
}
