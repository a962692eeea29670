using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.UnitTests.Routing;

/// <summary>
/// How a session is reached, from its own entry (<c>ProxyEntry:Sessions:{id}:Hosts</c>, <c>PathRouting</c>): its
/// custom domains join <c>Routing:Hosts</c>, a host claimed for two sessions stops the start, and a session closed to
/// path routing answers <c>/session/{id}/…</c> as a session nobody serves, before its visitor rules are read.
/// </summary>
public sealed class SessionRoutingChoicesTests : IAsyncDisposable
{
    private readonly ServiceProvider _services;
    private readonly RequestDelegate _pipeline;

    public SessionRoutingChoicesTests()
    {
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["ProxyEntry:Routing:Hosts:app.example.org"] = "demo",
            ["ProxyEntry:Sessions:shop:Hosts:0"] = "Shop.Example.org",
            ["ProxyEntry:Sessions:shop:PathRouting"] = "false",
            ["ProxyEntry:SessionDefaults:RateLimit:PerSecond"] = "0",
            ["ProxyEntry:RateLimits:PerVisitor:PerSecond"] = "0",
        }).Build();
        _services = new ServiceCollection().AddLogging().AddProxyEntry(configuration).BuildServiceProvider();
        // The credentials file's rule for shop: an API key (a visitor who reaches the session without one gets 401).
        Assert.True(SessionPattern.TryParse("shop", out SessionPattern? shop, out _));
        _services.GetRequiredService<SessionPolicies>().UseFileRules(new VisitorPolicies([new VisitorPolicy(shop!, [new ApiKeyRule([TokenHash.Of("key")])])]));
        var app = new ApplicationBuilder(_services);
        app.UseProxyEntry();
        app.Run(context =>
        {
            context.Response.StatusCode = StatusCodes.Status418ImATeapot; // not the proxy's
            return Task.CompletedTask;
        });
        _pipeline = app.Build();
    }

    public ValueTask DisposeAsync() => _services.DisposeAsync();

    [Fact]
    public async Task A_session_closed_to_path_routing_answers_its_path_as_a_session_nobody_serves_and_its_host_still_reaches_it()
    {
        DefaultHttpContext byPath = await SendAsync("/session/shop/x");
        DefaultHttpContext unknown = await SendAsync("/session/nobody/x");
        DefaultHttpContext byHost = await SendAsync("/x", host: "shop.example.org");

        Assert.Equal(StatusCodes.Status404NotFound, byPath.Response.StatusCode);
        Assert.Equal(Problem(unknown).Replace("nobody", "shop", StringComparison.Ordinal), Problem(byPath)); // the same problem, word for word
        Assert.Equal(StatusCodes.Status401Unauthorized, byHost.Response.StatusCode); // by its host, its visitor rule applies
    }

    [Fact]
    public async Task A_sessions_own_hosts_join_the_routing_hosts()
    {
        HostRouter hosts = _services.GetRequiredService<HostRouter>();

        Assert.Equal((HostRoute.Session, "shop"), (hosts.Match("shop.example.org:443", out string shop), shop));
        Assert.Equal((HostRoute.Session, "demo"), (hosts.Match("app.example.org", out string demo), demo));
        DefaultHttpContext appHost = await SendAsync("/x", host: "app.example.org");
        Assert.Equal(StatusCodes.Status404NotFound, appHost.Response.StatusCode); // routed to demo, which has no client
        Assert.Contains("demo", Body(appHost), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(new[] { "--ProxyEntry:Routing:Hosts:app.example.org=demo", "--ProxyEntry:Sessions:shop:Hosts:0=APP.example.org." },
        "ProxyEntry:Sessions:shop:Hosts: host 'APP.example.org' is already claimed for session 'demo' by ProxyEntry:Routing:Hosts:app.example.org")]
    [InlineData(new[] { "--ProxyEntry:Sessions:a:Hosts:0=x.example.org", "--ProxyEntry:Sessions:b:Hosts:0=x.example.org" },
        "ProxyEntry:Sessions:b:Hosts: host 'x.example.org' is already claimed for session 'a' by ProxyEntry:Sessions:a:Hosts")]
    [InlineData(new[] { "--ProxyEntry:Sessions:a:Hosts:0=not_a host" }, "ProxyEntry:Sessions:a:Hosts: 'not_a host' is not a host name.")]
    public void A_host_claimed_for_two_sessions_or_not_a_host_stops_the_start_with_one_line(string[] arguments, string line)
    {
        ValidateOptionsResult result = new ProxyEntryOptionsValidator().Validate(null, Bound(arguments));

        string failure = Assert.Single(result.Failures!);
        Assert.StartsWith(line, failure, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', failure);
    }

    [Fact]
    public void A_host_a_session_claims_in_both_places_is_one_claim()
    {
        ValidateOptionsResult result = new ProxyEntryOptionsValidator().Validate(null,
            Bound("--ProxyEntry:Routing:Hosts:app.example.org=shop", "--ProxyEntry:Sessions:shop:Hosts:0=app.example.org"));

        Assert.True(result.Succeeded);
    }

    private static ProxyEntryOptions Bound(params string[] arguments) =>
        new ConfigurationBuilder().AddCommandLine(arguments).Build().GetSection(ProxyEntryOptions.SectionName).Get<ProxyEntryOptions>()!;

    /// <summary>The answer's problem, without its trace id (one per request).</summary>
    private static string Problem(HttpContext context) =>
        System.Text.RegularExpressions.Regex.Replace(Body(context), "\"traceId\":\"[^\"]*\"", string.Empty);

    private static string Body(HttpContext context) => System.Text.Encoding.UTF8.GetString(((MemoryStream)context.Response.Body).ToArray());

    private async Task<DefaultHttpContext> SendAsync(string target, string host = "127.0.0.1")
    {
        var context = new DefaultHttpContext { RequestServices = _services };
        context.Request.Method = "GET";
        context.Request.Path = target;
        context.Request.Host = new HostString(host);
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = target;
        context.Connection.RemoteIpAddress = System.Net.IPAddress.Loopback;
        context.Response.Body = new MemoryStream();
        await _pipeline(context);
        return context;
    }
}
