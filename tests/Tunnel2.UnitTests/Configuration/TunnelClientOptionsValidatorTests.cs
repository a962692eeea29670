using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient;

namespace Tunnel2.UnitTests.Configuration;

public sealed class TunnelClientOptionsValidatorTests
{
    private static TunnelClientOptions Valid() => new() { Session = "demo", Token = "a-good-token" };

    private static ValidateOptionsResult Validate(TunnelClientOptions options) => new TunnelClientOptionsValidator().Validate(null, options);

    [Fact]
    public void The_defaults_with_a_session_and_token_are_valid()
    {
        Assert.True(Validate(Valid()).Succeeded);
    }

    [Theory]
    [InlineData("carol:rabbit-hole", null, null, true)]
    [InlineData(null, "10.0.0.0/8, 2001:db8::/32", "192.0.2.7", true)]
    [InlineData("carol:short", null, null, false)]
    [InlineData(":rabbit-hole", null, null, false)]
    [InlineData("no-colon-at-all", null, null, false)]
    [InlineData(null, "10.0.0.0/33", null, false)]
    [InlineData(null, null, "office", false)]
    public void Declared_visitor_rules_are_checked_at_start(string? basicAuth, string? allow, string? deny, bool valid)
    {
        TunnelClientOptions options = Valid();
        options.Visitors.BasicAuth = basicAuth;
        options.Visitors.CidrAllow = allow;
        options.Visitors.CidrDeny = deny;

        Assert.Equal(valid, Validate(options).Succeeded);
    }

    [Fact]
    public void An_https_server_with_a_pin_in_either_spelling_is_valid()
    {
        TunnelClientOptions options = Valid();
        options.Server = "https://tunnel.example:443";
        options.Tls.ServerCertificateSha256 = string.Join(':', Enumerable.Repeat("AB", 32));

        Assert.True(Validate(options).Succeeded);
        options.Tls.ServerCertificateSha256 = new string('0', 64);
        Assert.True(Validate(options).Succeeded);
    }

    [Theory]
    [InlineData("https://127.0.0.1:12001", "abc", "not a SHA-256 fingerprint")]
    [InlineData("https://127.0.0.1:12001", "0011", "not a SHA-256 fingerprint")]
    [InlineData("http://127.0.0.1:12001", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "names none")]
    public void A_bad_pin_or_a_pin_without_https_is_refused_with_the_reason(string server, string pin, string reason)
    {
        TunnelClientOptions options = Valid();
        options.Server = server;
        options.Tls.ServerCertificateSha256 = pin;

        Assert.Contains(reason, Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Fact]
    public void A_missing_CA_file_is_refused_naming_the_file()
    {
        TunnelClientOptions options = Valid();
        options.Server = "https://127.0.0.1:12001";
        options.Tls.CaCertificate = "/nonexistent/ca.pem";

        Assert.Contains("'/nonexistent/ca.pem'", Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("not a url")]
    [InlineData("ws://127.0.0.1:12001")]
    [InlineData("wss://127.0.0.1:12001")]
    [InlineData("127.0.0.1:12001")]
    [InlineData("http://127.0.0.1:12001, http://127.0.0.1:12001")]
    [InlineData("http://127.0.0.1:12001, tcp://127.0.0.1:12002")]
    public void A_server_that_is_not_an_http_or_https_url_is_refused(string server)
    {
        TunnelClientOptions options = Valid();
        options.Server = server;

        Assert.StartsWith("TunnelClient:Server", Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("http://127.0.0.1:12007", true)]
    [InlineData("https://backend.internal", true)]
    [InlineData("ftp://backend", false)]
    [InlineData("backend:80", false)]
    [InlineData("http://127.0.0.1:8081, http://127.0.0.1:8082 weight=3", true)]
    [InlineData("http://127.0.0.1:8081,http://127.0.0.1:8082", true)]
    [InlineData("http://127.0.0.1:8081, ftp://127.0.0.1:8082", false)]
    [InlineData("http://127.0.0.1:8081 weight=0", false)]
    [InlineData("http://127.0.0.1:8081 weight=101", false)]
    [InlineData("http://127.0.0.1:8081 weigth=3", false)]
    [InlineData("http://127.0.0.1:8081, http://127.0.0.1:8081", false)]
    [InlineData(" , ", false)]
    public void The_backend_may_be_http_or_https_one_or_several_each_with_an_optional_weight(string backend, bool valid)
    {
        TunnelClientOptions options = Valid();
        options.Backends.Urls = backend;

        Assert.Equal(valid, Validate(options).Succeeded);
    }

    [Fact]
    public void Header_affinity_over_backends_needs_a_header_name()
    {
        TunnelClientOptions options = Valid();
        options.Backends.Affinity = Tunnel2.Balancing.AffinityMode.Header;

        Assert.Contains("Backends:AffinityHeader", Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
        options.Backends.AffinityHeader = "X-User";
        Assert.True(Validate(options).Succeeded);
    }

    [Theory]
    [InlineData("has space")]
    [InlineData("slash/inside")]
    [InlineData("ümlaut")]
    [InlineData("percent%20")]
    public void A_malformed_session_id_is_refused(string session)
    {
        TunnelClientOptions options = Valid();
        options.Session = session;

        Assert.Contains("TunnelClient:Session", Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Fact]
    public void A_session_id_longer_than_128_characters_is_refused()
    {
        TunnelClientOptions options = Valid();
        options.Session = new string('s', 129);

        Assert.True(Validate(options).Failed);
    }

    [Fact]
    public void An_empty_session_is_left_to_the_Required_annotation()
    {
        TunnelClientOptions options = Valid();
        options.Session = string.Empty;

        Assert.True(Validate(options).Succeeded);
    }

    [Fact]
    public void A_max_reconnect_delay_below_the_min_is_refused()
    {
        TunnelClientOptions options = Valid();
        options.Uplink.ReconnectMinDelay = TimeSpan.FromSeconds(5);
        options.Uplink.ReconnectMaxDelay = TimeSpan.FromSeconds(1);

        Assert.Contains("ReconnectMaxDelay", Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Fact]
    public void Equal_min_and_max_reconnect_delays_are_fine()
    {
        TunnelClientOptions options = Valid();
        options.Uplink.ReconnectMinDelay = TimeSpan.FromSeconds(1);
        options.Uplink.ReconnectMaxDelay = TimeSpan.FromSeconds(1);

        Assert.True(Validate(options).Succeeded);
    }

    [Fact]
    public void A_keep_alive_timeout_not_longer_than_the_interval_is_refused()
    {
        TunnelClientOptions options = Valid();
        options.Uplink.KeepAliveTimeout = options.Uplink.KeepAliveInterval;

        Assert.Contains("KeepAliveTimeout", Assert.Single(Validate(options).Failures!), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("preserve", true)]
    [InlineData("rewrite", true)]
    [InlineData("app.internal:8080", true)]
    [InlineData("http://app.internal", false)]
    [InlineData("keep", true)] // a host name like any other
    [InlineData("app internal", false)]
    public void The_host_header_is_preserve_rewrite_or_a_host_name(string value, bool valid)
    {
        TunnelClientOptions options = Valid();
        options.Backends.HostHeader = value;

        ValidateOptionsResult result = Validate(options);

        Assert.Equal(valid, result.Succeeded);
        if (!valid)
        {
            Assert.Contains("TunnelClient:Backends:HostHeader (--host-header)", Assert.Single(result.Failures!), StringComparison.Ordinal);
        }
    }
}
