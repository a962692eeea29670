using System.IO.Pipelines;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Balancing;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>The affinity key a request brings, and the cookie that keeps a caller on the client that answered.</summary>
public sealed class AffinityCookieTests
{
    private static readonly BalancingPolicy CookiePolicy = new(BalancingStrategy.RoundRobin, AffinityMode.Cookie, null, "t2");

    [Fact]
    public void A_caller_without_the_clients_cookie_gets_one_for_the_sessions_path()
    {
        ProxyExchange exchange = Answered(new SessionRoute("abc", "/session/abc", ByHost: false), callerKey: null);

        AffinityCookie.AppendIfChanged(exchange);

        Assert.Equal($"t2={exchange.Member!.AffinityKey}; Path=/session/abc/; HttpOnly; SameSite=Lax", exchange.Context.Response.Headers.SetCookie.ToString());
    }

    [Fact]
    public void On_a_sessions_own_host_over_TLS_the_cookie_is_for_the_whole_host_and_secure()
    {
        ProxyExchange exchange = Answered(new SessionRoute("abc", string.Empty, ByHost: true), callerKey: "another-client");
        exchange.Context.Request.IsHttps = true;

        AffinityCookie.AppendIfChanged(exchange);

        Assert.Equal($"t2={exchange.Member!.AffinityKey}; Path=/; HttpOnly; SameSite=Lax; Secure", exchange.Context.Response.Headers.SetCookie.ToString());
    }

    [Fact]
    public void A_caller_already_on_the_client_that_answered_gets_no_cookie()
    {
        SessionMember member = MemberOf.Any();
        ProxyExchange exchange = Answered(new SessionRoute("abc", "/session/abc", ByHost: false), member.AffinityKey, member);

        AffinityCookie.AppendIfChanged(exchange);

        Assert.Equal(0, exchange.Context.Response.Headers.SetCookie.Count);
    }

    [Fact]
    public void The_key_is_the_cookies_value_the_headers_value_or_the_callers_address()
    {
        var context = new DefaultHttpContext();
        context.Request.Headers.Cookie = "t2=k1";
        context.Request.Headers["X-User"] = "u7";
        context.Connection.RemoteIpAddress = System.Net.IPAddress.Parse("192.0.2.9");

        Assert.Equal("k1", AffinityKey.Of(context, CookiePolicy));
        Assert.Equal("u7", AffinityKey.Of(context, CookiePolicy with { Affinity = AffinityMode.Header, AffinityHeader = "X-User" }));
        Assert.Equal("192.0.2.9", AffinityKey.Of(context, CookiePolicy with { Affinity = AffinityMode.ClientIp }));
        Assert.Null(AffinityKey.Of(context, CookiePolicy with { Affinity = AffinityMode.None }));
    }

    private static ProxyExchange Answered(SessionRoute route, string? callerKey, SessionMember? member = null)
    {
        var exchange = new ProxyExchange();
        exchange.Start(new DefaultHttpContext(), route, "/", new RequestHead("GET", "/", []), hasBody: false);
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
