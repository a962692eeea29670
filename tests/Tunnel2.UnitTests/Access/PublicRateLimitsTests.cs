using System.Net;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.UnitTests.Access;

public sealed class PublicRateLimitsTests
{
    [Theory]
    [InlineData("192.0.2.7", "192.0.2.7")]
    [InlineData("::ffff:192.0.2.7", "192.0.2.7")]
    [InlineData("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::")]
    [InlineData("2001:db8:1:2::1", "2001:db8:1:2::")]
    public void A_visitor_is_its_IPv4_address_or_its_IPv6_slash_64(string address, string bucket)
    {
        var context = new DefaultHttpContext();
        context.Connection.RemoteIpAddress = IPAddress.Parse(address);

        Assert.Equal(IPAddress.Parse(bucket), PublicRateLimits.VisitorOf(context));
    }

    [Theory]
    [InlineData("/session/demo/x", null, "demo")]
    [InlineData("/session/demo", null, "demo")]
    [InlineData("/healthz", null, null)]
    [InlineData("/", "shop.tunnel.test", "shop")]
    public void The_session_of_a_request_comes_from_its_host_or_its_path(string path, string? host, string? session)
    {
        var limits = new PublicRateLimits(new RateLimitOptions(), new HostRouter("tunnel.test", new Dictionary<string, string>()), new SessionPolicies());
        var context = new DefaultHttpContext();
        context.Request.Path = path;
        context.Request.Host = new HostString(host ?? "127.0.0.1");

        Assert.Equal(session, limits.SessionOf(context));
    }

    [Theory]
    [InlineData(100, 0, 100, 10, 100)]
    [InlineData(5, 20, 20, 5, 1000)]
    [InlineData(15, 0, 15, 15, 1000)] // not 10 a second, as a 100 ms period of 15 / 10 tokens would give
    public void A_bucket_refills_at_exactly_its_rate_and_holds_its_burst(int perSecond, int burst, int tokenLimit, int perPeriod, int periodMs)
    {
        var options = new TokenBucketLimit { PerSecond = perSecond, Burst = burst }.ToLimiterOptions();

        Assert.Equal((tokenLimit, perPeriod, TimeSpan.FromMilliseconds(periodMs)), (options.TokenLimit, options.TokensPerPeriod, options.ReplenishmentPeriod));
    }
}
