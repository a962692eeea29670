using System.Net;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.ProxyEntry.Admission;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Policy;
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

    [Fact]
    public void The_session_bucket_is_the_one_the_route_step_chose_not_one_read_from_the_path_again()
    {
        PartitionedRateLimiter<HttpContext> limiter = Limiter(new RateLimitOptions { PerVisitor = new TokenBucketLimit() });

        // The path names "other", the route step decided "demo": the request counts against "demo".
        using RateLimitLease first = limiter.AttemptAcquire(Routed("/session/other/x", "demo"));
        using RateLimitLease demoAgain = limiter.AttemptAcquire(Routed("/session/demo/x", "demo"));
        using RateLimitLease other = limiter.AttemptAcquire(Routed("/session/other/x", "other"));

        Assert.True(first.IsAcquired);
        Assert.False(demoAgain.IsAcquired);
        Assert.True(other.IsAcquired);
    }

    [Fact]
    public void A_request_without_a_routed_session_takes_no_token()
    {
        PartitionedRateLimiter<HttpContext> limiter = Limiter(new RateLimitOptions { PerVisitor = new TokenBucketLimit { PerSecond = 1 } });
        var unrouted = new DefaultHttpContext();
        unrouted.Request.Path = "/session/demo/x"; // not routed: the limiter does not parse it itself
        HttpContext notFound = Routed("/session/", null);

        for (int i = 0; i < 3; i++)
        {
            using RateLimitLease lease = limiter.AttemptAcquire(unrouted);
            using RateLimitLease notFoundLease = limiter.AttemptAcquire(notFound);
            Assert.True(lease.IsAcquired && notFoundLease.IsAcquired);
        }
    }

    /// <summary>Every session's bucket: one request a second (its <see cref="SessionPolicy"/>, as the route step attaches it).</summary>
    private static readonly SessionPolicies OnePerSecond =
        new(new BalancingOptions(), new SessionDefaultsOptions { RateLimit = new TokenBucketLimit { PerSecond = 1 } }, new Dictionary<string, SessionOptions>());

    private static PartitionedRateLimiter<HttpContext> Limiter(RateLimitOptions options)
    {
        var limiter = new RateLimiterOptions();
        new PublicRateLimits(options, OnePerSecond).Configure(limiter, NullLogger.Instance);
        return limiter.GlobalLimiter!;
    }

    /// <param name="session">The session the route step chose; null for a request it found none in.</param>
    private static DefaultHttpContext Routed(string path, string? session)
    {
        var context = new DefaultHttpContext();
        context.Request.Path = path;
        context.Connection.RemoteIpAddress = IPAddress.Loopback;
        var exchange = new ProxyExchange();
        exchange.Enter(context, session is null
            ? new RoutedSession(RouteStatus.NotFound, new SessionRoute("(none)", string.Empty, ByHost: false), string.Empty, NamesSession: false)
            : new RoutedSession(RouteStatus.Forward, new SessionRoute(session, "/session/" + session, ByHost: false), "/x", NamesSession: true),
            OnePerSecond.For(session ?? "(none)"));
        context.Features.Set(exchange);
        return context;
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
