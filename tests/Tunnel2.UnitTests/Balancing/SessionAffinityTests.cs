using System.IO.Pipelines;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.UnitTests.Forwarding.Steps;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>
/// The server's side of affinity: the key a public request brings, and the cookie that keeps a caller on the client
/// that answered.
/// </summary>
public sealed class SessionAffinityTests
{
    private static readonly BalancingPolicy CookiePolicy = new(BalancingStrategy.RoundRobin, AffinityMode.Cookie, null, "t2");

    [Fact]
    public void A_caller_without_the_clients_cookie_gets_one_for_the_sessions_path()
    {
        ProxyExchange exchange = Answered(new SessionRoute("abc", "/session/abc", ByHost: false), callerKey: null);

        Assert.Equal($"t2={exchange.Member!.AffinityKey}; Path=/session/abc/; HttpOnly; SameSite=Lax", UplinkPicker.AffinityCookieFor(exchange));
    }

    [Fact]
    public void On_a_sessions_own_host_over_TLS_the_cookie_is_for_the_whole_host_and_secure()
    {
        ProxyExchange exchange = Answered(new SessionRoute("abc", string.Empty, ByHost: true), callerKey: "another-client");
        exchange.Context.Request.IsHttps = true;

        Assert.Equal($"t2={exchange.Member!.AffinityKey}; Path=/; HttpOnly; SameSite=Lax; Secure", UplinkPicker.AffinityCookieFor(exchange));
    }

    [Fact]
    public void A_caller_already_on_the_client_that_answered_gets_no_cookie()
    {
        SessionMember member = MemberOf.Any();
        ProxyExchange exchange = Answered(new SessionRoute("abc", "/session/abc", ByHost: false), member.AffinityKey, member);

        Assert.Null(UplinkPicker.AffinityCookieFor(exchange));
    }

    [Fact]
    public void The_key_is_the_cookies_value_the_headers_value_or_the_callers_address()
    {
        var context = new DefaultHttpContext();
        context.Request.Headers.Cookie = "t2=k1";
        context.Request.Headers["X-User"] = "u7";
        context.Connection.RemoteIpAddress = System.Net.IPAddress.Parse("192.0.2.9");

        var request = new HttpAffinityRequest(context, "/session/abc");

        Assert.Equal("k1", new CookieAffinity("t2").KeyOf(request));
        Assert.Equal("u7", new HeaderAffinity("X-User").KeyOf(request));
        Assert.Equal("192.0.2.9", ClientAddressAffinity.Instance.KeyOf(request));
        Assert.Null(NoAffinity.Instance.KeyOf(request));
    }

    [Fact]
    public void Several_values_of_the_affinity_header_are_one_key_joined_with_commas()
    {
        var context = new DefaultHttpContext();
        context.Request.Headers["X-User"] = new Microsoft.Extensions.Primitives.StringValues(["a", "b"]);

        Assert.Equal("a,b", new HeaderAffinity("X-User").KeyOf(new HttpAffinityRequest(context, string.Empty)));
    }

    [Fact]
    public void A_session_policy_made_from_the_same_settings_is_equal_and_names_its_mode_and_header()
    {
        var policy = new BalancingPolicy(BalancingStrategy.RoundRobin, AffinityMode.Header, "X-User", "t2");

        Assert.Equal(new BalancingPolicy(BalancingStrategy.RoundRobin, AffinityMode.Header, "X-User", "t2"), policy);
        Assert.Equal(AffinityMode.Header, policy.Affinity);
        Assert.Equal("X-User", policy.AffinityHeader);
        Assert.Null(CookiePolicy.AffinityHeader);
    }

    private static ProxyExchange Answered(SessionRoute route, string? callerKey, SessionMember? member = null)
    {
        ProxyExchange exchange = ExchangeOf.Admitted(new DefaultHttpContext(), route, new RequestHead("GET", "/", []));
        exchange.Policy = CookiePolicy;
        exchange.AffinityKey = callerKey;
        exchange.Member = member ?? MemberOf.Any();
        return exchange;
    }
}

/// <summary>A session member on an uplink over in-memory pipes; it need not run.</summary>
internal static class MemberOf
{
    public static SessionMember Any() =>
        new(new Uplink(new DuplexPipe(new Pipe().Reader, new Pipe().Writer), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance),
            instanceId: null, weight: 1);
}
