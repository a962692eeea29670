using System.Net;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.Balancing;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Admission;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Policy;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;
using ServerLegacyKeys = Tunnel2.TunnelServer.Configuration.LegacyKeys;

namespace Tunnel2.UnitTests.Sessions;

/// <summary>
/// One home per session: the order in which a session's settings are merged (docs/configuration.md, "One session's
/// settings"), that the HTTP and TCP doors read them from the session's policy, and that the old per-session keys still
/// land there.
/// </summary>
public sealed class SessionPolicyTests
{
    private static SessionPolicies Policies(ProxyEntryOptions options) => new(options.Balancing, options.SessionDefaults, options.Sessions);

    private static ProxyEntryOptions Bound(params string[] args)
    {
        var configuration = new ConfigurationManager();
        configuration.AddCommandLine(args);
        ServerLegacyKeys.Renamed.Apply(configuration);
        return configuration.GetSection(ProxyEntryOptions.SectionName).Get<ProxyEntryOptions>() ?? new ProxyEntryOptions();
    }

    [Fact]
    public void With_no_entry_every_session_gets_the_defaults_and_the_same_policy_object()
    {
        SessionPolicies policies = Policies(Bound("--ProxyEntry:Balancing:Strategy=LeastRequests", "--ProxyEntry:SessionDefaults:MaxTcpConnections=40"));

        SessionPolicy any = policies.For("any");
        Assert.Same(policies.Default, any);
        Assert.Same(any, policies.For("other"));
        Assert.Equal(BalancingStrategy.LeastRequests, any.Balancing.Strategy);
        Assert.Equal(40, any.MaxTcpConnections);
        Assert.Equal(1000, any.RateLimit.PerSecond); // the default bucket
    }

    [Fact]
    public void A_sessions_own_entry_wins_key_by_key_and_leaves_the_rest_to_the_defaults()
    {
        SessionPolicies policies = Policies(Bound(
            "--ProxyEntry:Balancing:Affinity=Cookie", "--ProxyEntry:SessionDefaults:MaxTcpConnections=40",
            "--ProxyEntry:SessionDefaults:RateLimit:PerSecond=50",
            "--ProxyEntry:Sessions:shop:Strategy=Weighted", "--ProxyEntry:Sessions:shop:RateLimit:PerSecond=2", "--ProxyEntry:Sessions:db:MaxTcpConnections=3"));

        SessionPolicy shop = policies.For("shop"), db = policies.For("db");
        Assert.Same(shop, policies.For("shop")); // resolved once, not per request
        Assert.Equal((BalancingStrategy.Weighted, AffinityMode.Cookie, 2, 40), (shop.Balancing.Strategy, shop.Balancing.Affinity, shop.RateLimit.PerSecond, shop.MaxTcpConnections));
        Assert.Equal((BalancingStrategy.RoundRobin, AffinityMode.Cookie, 50, 3), (db.Balancing.Strategy, db.Balancing.Affinity, db.RateLimit.PerSecond, db.MaxTcpConnections));
        Assert.Equal(50, policies.For("other").RateLimit.PerSecond);
    }

    [Fact]
    public void The_old_per_session_keys_land_on_the_new_ones_and_are_reported_for_the_warning()
    {
        var configuration = new ConfigurationManager();
        configuration.AddCommandLine(["--TunnelServer:Tcp:MaxConnectionsPerSession=7", "--ProxyEntry:RateLimits:PerSession:PerSecond=9",
            "--ProxyEntry:Balancing:Sessions:shop:Strategy=LeastRequests"]);

        IReadOnlyList<KeyValuePair<string, string>> renamed = ServerLegacyKeys.Renamed.Apply(configuration);
        SessionPolicies policies = Policies(configuration.GetSection(ProxyEntryOptions.SectionName).Get<ProxyEntryOptions>()!);

        Assert.Equal(7, policies.Default.MaxTcpConnections);
        Assert.Equal(9, policies.Default.RateLimit.PerSecond);
        Assert.Equal(BalancingStrategy.LeastRequests, policies.For("shop").Balancing.Strategy);
        Assert.Contains(new KeyValuePair<string, string>("TunnelServer:Tcp:MaxConnectionsPerSession", "ProxyEntry:SessionDefaults:MaxTcpConnections"), renamed);
        Assert.Contains(new KeyValuePair<string, string>("ProxyEntry:RateLimits:PerSession:PerSecond", "ProxyEntry:SessionDefaults:RateLimit:PerSecond"), renamed);
        Assert.Contains(new KeyValuePair<string, string>("ProxyEntry:Balancing:Sessions:shop:Strategy", "ProxyEntry:Sessions:shop:Strategy"), renamed);
    }

    [Fact]
    public void A_new_key_wins_over_its_old_key()
    {
        SessionPolicies policies = Policies(Bound("--TunnelServer:Tcp:MaxConnectionsPerSession=7", "--ProxyEntry:SessionDefaults:MaxTcpConnections=5",
            "--ProxyEntry:Balancing:Sessions:shop:Strategy=LeastRequests", "--ProxyEntry:Sessions:shop:Strategy=Weighted"));

        Assert.Equal(5, policies.Default.MaxTcpConnections);
        Assert.Equal(BalancingStrategy.Weighted, policies.For("shop").Balancing.Strategy);
    }

    [Theory]
    [InlineData("--ProxyEntry:Sessions:bad!id:MaxTcpConnections=3", "ProxyEntry:Sessions:bad!id:")]
    [InlineData("--ProxyEntry:Sessions:db:MaxTcpConnections=0", "ProxyEntry:Sessions:db:MaxTcpConnections")]
    [InlineData("--ProxyEntry:Sessions:db:RateLimit:PerSecond=-1", "ProxyEntry:Sessions:db:RateLimit")]
    [InlineData("--ProxyEntry:Sessions:db:Affinity=Header", "ProxyEntry:Sessions:db:Affinity")]
    public void A_wrong_session_entry_stops_the_start_with_a_line_naming_its_key(string argument, string key)
    {
        ValidateOptionsResult result = new ProxyEntryOptionsValidator().Validate(null, Bound(argument));

        Assert.True(result.Failed);
        string failure = Assert.Single(result.Failures!);
        Assert.StartsWith(key, failure, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', failure);
    }

    [Fact]
    public void The_http_door_limits_a_session_by_its_own_bucket_and_leaves_the_others_to_the_defaults()
    {
        // Off by default; on for "slow" only, from the options' per-session section.
        SessionPolicies policies = Policies(Bound("--ProxyEntry:SessionDefaults:RateLimit:PerSecond=0", "--ProxyEntry:RateLimits:PerVisitor:PerSecond=0",
            "--ProxyEntry:Sessions:slow:RateLimit:PerSecond=1", "--ProxyEntry:Sessions:slow:RateLimit:Burst=2"));
        var limits = new PublicRateLimits(new RateLimitOptions { PerVisitor = new TokenBucketLimit() }, policies);
        var options = new RateLimiterOptions();
        limits.Configure(options, NullLogger.Instance);
        PartitionedRateLimiter<HttpContext> limiter = options.GlobalLimiter!;

        bool[] slow = [.. Enumerable.Range(0, 3).Select(_ => Acquire(limiter, policies, "/session/slow/x"))];
        bool[] fast = [.. Enumerable.Range(0, 20).Select(_ => Acquire(limiter, policies, "/session/fast/x"))];

        Assert.Equal([true, true, false], slow);
        Assert.All(fast, Assert.True);
    }

    [Fact]
    public void With_no_bucket_anywhere_the_rate_limiter_stays_out()
    {
        SessionPolicies policies = Policies(Bound("--ProxyEntry:SessionDefaults:RateLimit:PerSecond=0"));
        var limits = new PublicRateLimits(new RateLimitOptions { PerVisitor = new TokenBucketLimit() }, policies);

        Assert.False(policies.AnyRateLimit);
        Assert.False(limits.IsOn);
    }

    [Fact]
    public void A_clients_declared_rules_cannot_loosen_the_credentials_files_they_only_add()
    {
        var policies = new SessionPolicies();
        policies.UseFileRules(new VisitorPolicies([Policy("db", allow: [], deny: ["10.0.0.5/32"])]));

        // The client tries to open the session to everyone: the file's deny still holds.
        policies.Declare("db", Policy("db", allow: ["0.0.0.0/0"], deny: []));
        Assert.Equal(VisitorVerdict.AddressDenied, policies.For("db").Visitors.CheckTcpCaller(IPAddress.Parse("10.0.0.5")));
        Assert.Equal(VisitorVerdict.Allowed, policies.For("db").Visitors.CheckTcpCaller(IPAddress.Parse("10.0.0.6")));

        // The client narrows it: both hold, so only what both allow passes.
        policies.Declare("db", Policy("db", allow: ["10.0.0.0/30"], deny: []));
        Assert.Equal(VisitorVerdict.AddressDenied, policies.For("db").Visitors.CheckTcpCaller(IPAddress.Parse("10.0.0.6")));
        Assert.Equal(VisitorVerdict.Allowed, policies.For("db").Visitors.CheckTcpCaller(IPAddress.Parse("10.0.0.2")));
    }

    internal static VisitorPolicy Policy(string session, string[] allow, string[] deny)
    {
        Assert.True(SessionPattern.TryParse(session, out SessionPattern? pattern, out _));
        return new VisitorPolicy(pattern!, [new AddressRule([.. allow.Select(IPNetwork.Parse)], [.. deny.Select(IPNetwork.Parse)])]);
    }

    /// <summary>A request as it reaches the rate limiter: routed once, its session's policy read with the route, both in its exchange.</summary>
    private static bool Acquire(PartitionedRateLimiter<HttpContext> limiter, SessionPolicies policies, string path)
    {
        var context = new DefaultHttpContext();
        context.Request.Path = path;
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = path;
        context.Connection.RemoteIpAddress = IPAddress.Loopback;
        RoutedSession routed = ExchangeRouter.Route(context, new HostRouter(null, new Dictionary<string, string>()))!.Value;
        Assert.True(routed.NamesSession);
        var exchange = new ProxyExchange();
        exchange.Enter(context, routed, policies.For(routed.Session));
        context.Features.Set(exchange);
        using RateLimitLease lease = limiter.AttemptAcquire(context);
        return lease.IsAcquired;
    }
}
