using Microsoft.Extensions.Options;
using Tunnel2.Balancing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;

namespace Tunnel2.UnitTests.Configuration;

public sealed class ProxyEntryOptionsValidatorTests
{
    private static ValidateOptionsResult Validate(ProxyEntryOptions options) => new ProxyEntryOptionsValidator().Validate(null, options);

    [Fact]
    public void The_defaults_and_a_full_host_and_balancing_setup_are_valid()
    {
        Assert.True(Validate(new ProxyEntryOptions()).Succeeded);
        Assert.True(Validate(new ProxyEntryOptions
        {
            Routing = { HostSuffix = "tunnel.example.com", Hosts = { ["app.example.org"] = "demo" } },
            Balancing = new BalancingOptions
            {
                Strategy = BalancingStrategy.LeastRequests,
                Affinity = AffinityMode.Header,
                AffinityHeader = "X-User",
            },
            Sessions = { ["shop"] = new SessionOptions { Affinity = AffinityMode.Cookie, MaxTcpConnections = 5, RateLimit = new() { PerSecond = 2 } } },
        }).Succeeded);
    }

    [Fact]
    public void Trusted_proxies_are_read_once_into_their_networks_and_the_entries_that_are_none()
    {
        var options = new ProxyEntryOptions { TrustedProxies = ["10.0.0.0/8", "127.0.0.1", "proxy.example.com", "fd00::/8"] };

        (List<System.Net.IPNetwork> networks, List<string> invalid) = options.ParseTrustedProxies();

        Assert.Equal(["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"], networks.Select(network => network.ToString()));
        Assert.Equal(["proxy.example.com"], invalid);
        Assert.Contains(Validate(options).Failures!, failure => failure.Contains("'proxy.example.com'", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("http://tunnel.example.com")]
    [InlineData("tunnel example")]
    [InlineData("*.tunnel.example.com")]
    public void A_host_suffix_that_is_no_host_name_is_refused_by_name(string suffix)
    {
        ValidateOptionsResult result = Validate(new ProxyEntryOptions { Routing = { HostSuffix = suffix } });

        Assert.True(result.Failed);
        Assert.Contains("ProxyEntry:Routing:HostSuffix", result.FailureMessage, StringComparison.Ordinal);
    }

    [Fact]
    public void A_custom_domain_must_be_a_host_name_and_map_to_a_session_id()
    {
        ValidateOptionsResult result = Validate(new ProxyEntryOptions { Routing = { Hosts = { ["not a host"] = "demo", ["app.example.org"] = "bad session" } } });

        Assert.Contains("'not a host' is not a host name", result.FailureMessage, StringComparison.Ordinal);
        Assert.Contains("'bad session' is not a session id", result.FailureMessage, StringComparison.Ordinal);
    }

    [Fact]
    public void Header_affinity_needs_a_header_by_default_and_per_session()
    {
        Assert.Contains("AffinityHeader", Validate(new ProxyEntryOptions { Balancing = { Affinity = AffinityMode.Header } }).FailureMessage, StringComparison.Ordinal);
        ValidateOptionsResult perSession = Validate(new ProxyEntryOptions
        {
            Sessions = { ["shop"] = new SessionOptions { Affinity = AffinityMode.Header } },
        });
        Assert.Contains("ProxyEntry:Sessions:shop:Affinity", perSession.FailureMessage, StringComparison.Ordinal);
    }

    [Fact]
    public void The_ejection_backoff_cap_must_not_be_below_the_backoff()
    {
        ValidateOptionsResult result = Validate(new ProxyEntryOptions
        {
            Balancing = { EjectionBackoff = TimeSpan.FromSeconds(5), MaxEjectionBackoff = TimeSpan.FromSeconds(1) },
        });

        Assert.Contains("MaxEjectionBackoff", result.FailureMessage, StringComparison.Ordinal);
    }
}
