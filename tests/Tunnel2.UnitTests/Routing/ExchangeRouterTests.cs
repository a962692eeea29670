using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.UnitTests.Routing;

/// <summary>The route step: the session and the backend's target from the raw target, or from the host's match.</summary>
public sealed class ExchangeRouterTests
{
    [Fact]
    public void A_path_under_a_session_is_forwarded_with_the_prefix_stripped()
    {
        Assert.Equal(RouteStatus.Forward, ExchangeRouter.ByPath(Request("/session/abc/x/../y?q=1"), out SessionRoute route, out string target));

        Assert.Equal(new SessionRoute("abc", "/session/abc", ByHost: false), route);
        Assert.Equal("/y?q=1", target);
    }

    [Fact]
    public void The_session_root_without_its_slash_is_redirected_to_it_with_the_query()
    {
        Assert.Equal(RouteStatus.Redirect, ExchangeRouter.ByPath(Request("/session/abc?q=1"), out SessionRoute route, out string location));

        Assert.Equal("abc", route.Session);
        Assert.Equal("/session/abc/?q=1", location);
    }

    [Theory]
    [InlineData("/session/", false)]
    [InlineData("/elsewhere", false)]
    [InlineData("/session/abc/%2e%2e/%2e%2e/x", true)]
    public void A_target_naming_no_session_or_climbing_out_of_one_names_none(string raw, bool climbs)
    {
        Assert.Equal(climbs ? RouteStatus.OutsideSession : RouteStatus.NotFound, ExchangeRouter.ByPath(Request(raw), out SessionRoute route, out _));

        Assert.Equal("(none)", route.Session);
    }

    [Fact]
    public void By_host_the_whole_path_is_the_backends()
    {
        Assert.Equal(RouteStatus.Forward, ExchangeRouter.ByHost(Request("/session/x/./a?b"), HostRoute.Session, "abc", out SessionRoute route, out string target));

        Assert.Equal(new SessionRoute("abc", string.Empty, ByHost: true), route);
        Assert.Equal("/session/x/a?b", target);
    }

    [Fact]
    public void By_host_a_climb_above_the_root_is_refused_for_that_session()
    {
        Assert.Equal(RouteStatus.OutsideSession, ExchangeRouter.ByHost(Request("/a/../../x"), HostRoute.Session, "abc", out SessionRoute route, out _));

        Assert.Equal("abc", route.Session);
    }

    [Fact]
    public void A_host_under_the_suffix_that_names_no_session_is_not_found_by_host()
    {
        Assert.Equal(RouteStatus.NotFound, ExchangeRouter.ByHost(Request("/"), HostRoute.NotASession, string.Empty, out SessionRoute route, out _));

        Assert.Equal(new SessionRoute(string.Empty, string.Empty, ByHost: true), route);
    }

    [Theory]
    [InlineData("/session/demo/x", null, "Forward", "demo", true)]
    [InlineData("/session/demo", null, "Redirect", "demo", true)]
    [InlineData("/session/a/%2e%2e/%2e%2e/x", null, "OutsideSession", "(none)", false)]
    [InlineData("/session/", null, "NotFound", "(none)", false)]
    [InlineData("/", "shop.tunnel.test", "Forward", "shop", true)]
    [InlineData("/session/other/x", "shop.tunnel.test:8080", "Forward", "shop", true)]
    [InlineData("/", "x~y!.tunnel.test", "NotFound", "", false)]
    public void A_request_is_routed_once_by_its_host_or_its_path_and_the_decision_names_its_session(
        string rawTarget, string? host, string status, string session, bool namesSession)
    {
        DefaultHttpContext context = Request(rawTarget);
        context.Request.Path = rawTarget.Replace("%2e", ".", StringComparison.Ordinal);
        context.Request.Host = new HostString(host ?? "127.0.0.1");

        RoutedSession routed = ExchangeRouter.Route(context, Hosts)!.Value;

        Assert.Equal((status, session, namesSession), (routed.Status.ToString(), routed.Session, routed.NamesSession));
    }

    [Theory]
    [InlineData("/healthz")]
    [InlineData("/sessions/x")]
    [InlineData("/api/sessions")]
    public void A_request_that_is_not_the_proxys_is_not_routed(string path)
    {
        DefaultHttpContext context = Request(path);
        context.Request.Path = path;

        Assert.Null(ExchangeRouter.Route(context, Hosts));
    }

    private static readonly HostRouter Hosts = new("tunnel.test", new Dictionary<string, string>());

    private static DefaultHttpContext Request(string rawTarget)
    {
        var context = new DefaultHttpContext();
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = rawTarget;
        return context;
    }
}
