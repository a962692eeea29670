using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.UnitTests.Routing;

public sealed class HostRouterTests
{
    private static readonly HostRouter Router = new("tunnel.example.com", new Dictionary<string, string> { ["app.example.org"] = "demo" });

    [Theory]
    [InlineData("shop.tunnel.example.com", "shop")]
    [InlineData("shop.TUNNEL.example.COM", "shop")]
    [InlineData("shop.tunnel.example.com.", "shop")]
    [InlineData("a.b.tunnel.example.com", "a.b")]
    [InlineData("MixedCase.tunnel.example.com", "MixedCase")]
    [InlineData("app.example.org", "demo")]
    [InlineData("APP.example.org.", "demo")]
    [InlineData("shop.tunnel.example.com:12000", "shop")]
    [InlineData("app.example.org:443", "demo")]
    public void A_session_host_names_its_session(string host, string session)
    {
        Assert.Equal(HostRoute.Session, Router.Match(host, out string matched));
        Assert.Equal(session, matched);
    }

    [Theory]
    [InlineData("tunnel.example.com")]
    [InlineData("example.com")]
    [InlineData("shoptunnel.example.com")]
    [InlineData("127.0.0.1")]
    [InlineData("localhost")]
    [InlineData("")]
    [InlineData("other.example.org")]
    [InlineData("[::1]:12000")]
    [InlineData(":12000")]
    [InlineData(null)]
    public void Any_other_host_is_left_to_path_routing(string? host)
    {
        Assert.Equal(HostRoute.None, Router.Match(host, out _));
    }

    [Theory]
    [InlineData("bad!label.tunnel.example.com")]
    [InlineData("x~y!.tunnel.example.com.")]
    public void A_label_that_cannot_be_a_session_id_is_not_a_session(string host)
    {
        Assert.Equal(HostRoute.NotASession, Router.Match(host, out _));
    }

    [Fact]
    public void Without_a_suffix_or_custom_domains_host_routing_is_off()
    {
        var router = new HostRouter(new RoutingOptions());

        Assert.False(router.IsEnabled);
        Assert.Equal(HostRoute.None, router.Match("shop.tunnel.example.com", out _));
    }

    [Theory]
    [InlineData("tunnel.example.com", true)]
    [InlineData("localhost", true)]
    [InlineData("tunnel.example.com.", true)]
    [InlineData("http://tunnel.example.com", false)]
    [InlineData("tunnel example.com", false)]
    [InlineData("*.tunnel.example.com", false)]
    [InlineData("127.0.0.1", false)]
    [InlineData("", false)]
    public void Host_names_are_checked(string name, bool valid)
    {
        Assert.Equal(valid, HostRouter.IsHostName(name));
    }
}
