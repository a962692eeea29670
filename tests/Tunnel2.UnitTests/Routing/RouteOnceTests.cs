using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.ProxyEntry;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.UnitTests.Routing;

/// <summary>
/// The public entry's pipeline as <c>UseProxyEntry</c> builds it: a request is routed once as it comes in, and that one
/// decision (<see cref="RoutedSession"/>, with the session's policy, in the request's pooled <see cref="ProxyExchange"/>
/// feature) is what the rate limiter counts and the forwarder answers for. The exchange leaves the request when it ends.
/// </summary>
public sealed class RouteOnceTests : IAsyncDisposable
{
    private readonly ServiceProvider _services;
    private readonly RequestDelegate _pipeline;
    private int _passedOn;

    public RouteOnceTests()
    {
        IConfiguration configuration = new ConfigurationBuilder()
            .AddInMemoryCollection(new Dictionary<string, string?> { ["ProxyEntry:SessionDefaults:RateLimit:PerSecond"] = "1", ["ProxyEntry:SessionDefaults:RateLimit:Burst"] = "1" })
            .Build();
        _services = new ServiceCollection().AddLogging().AddProxyEntry(configuration).BuildServiceProvider();
        var app = new ApplicationBuilder(_services);
        app.UseProxyEntry();
        app.Run(_ =>
        {
            _passedOn++;
            return Task.CompletedTask;
        });
        _pipeline = app.Build();
    }

    public ValueTask DisposeAsync() => _services.DisposeAsync();

    [Fact]
    public async Task The_rate_limiter_and_the_forwarder_both_answer_for_the_session_the_route_step_chose()
    {
        DefaultHttpContext first = await SendAsync("/session/demo/x");
        DefaultHttpContext second = await SendAsync("/session/demo/y");
        DefaultHttpContext other = await SendAsync("/session/other/x");

        Assert.Equal(StatusCodes.Status404NotFound, first.Response.StatusCode); // the forwarder: no client for 'demo'
        Assert.Contains("demo", Body(first), StringComparison.Ordinal); // its problem names the session the route step chose
        Assert.Equal(StatusCodes.Status429TooManyRequests, second.Response.StatusCode); // the limiter: 'demo' spent its token
        Assert.Equal(StatusCodes.Status404NotFound, other.Response.StatusCode);
        Assert.Equal(0, _passedOn);
        // Answered by the forwarder or turned away by the limiter, each request gave its exchange back.
        Assert.All([first, second, other], context => Assert.Null(context.Features.Get<ProxyExchange>()));
    }

    [Fact]
    public async Task A_visitor_out_of_its_own_tokens_is_told_so_and_its_exchange_goes_back()
    {
        await using ServiceProvider services = new ServiceCollection().AddLogging().AddProxyEntry(new ConfigurationBuilder()
            .AddInMemoryCollection(new Dictionary<string, string?>
            {
                ["ProxyEntry:SessionDefaults:RateLimit:PerSecond"] = "0",
                ["ProxyEntry:RateLimits:PerVisitor:PerSecond"] = "1",
                ["ProxyEntry:RateLimits:PerVisitor:Burst"] = "1",
            }).Build()).BuildServiceProvider();
        var app = new ApplicationBuilder(services);
        app.UseProxyEntry();
        RequestDelegate pipeline = app.Build();

        // Another visitor's request first, in a bucket of its own: it compiles the path, so that the pair below comes well
        // within the one token's refill (1 s), which a cold first request on a loaded machine did not always.
        DefaultHttpContext warm = Request("/session/a/x", services);
        warm.Connection.RemoteIpAddress = System.Net.IPAddress.Parse("127.0.0.2");
        await pipeline(warm);

        DefaultHttpContext first = Request("/session/a/x", services), second = Request("/session/b/x", services);
        await pipeline(first);
        await pipeline(second);

        Assert.Equal(StatusCodes.Status429TooManyRequests, second.Response.StatusCode);
        Assert.Contains("PerVisitor", Body(second), StringComparison.Ordinal); // the visitor's bucket, found through its exchange
        Assert.Null(second.Features.Get<ProxyExchange>());
    }

    [Fact]
    public async Task A_request_that_is_not_the_proxys_goes_on_unrouted_and_uncounted()
    {
        DefaultHttpContext first = await SendAsync("/healthz");
        DefaultHttpContext second = await SendAsync("/healthz");

        Assert.Null(first.Features.Get<ProxyExchange>());
        Assert.Equal(StatusCodes.Status200OK, second.Response.StatusCode);
        Assert.Equal(2, _passedOn);
    }

    [Fact]
    public void Entering_the_proxy_allocates_nothing_beyond_what_parsing_the_target_makes()
    {
        ExchangeEntry entry = _services.GetRequiredService<ExchangeEntry>();
        DefaultHttpContext context = Request("/session/demo/x");
        entry.Leave(entry.Enter(context)!); // the pool holds an exchange now, and the request's features their store
        HostRouter hosts = _services.GetRequiredService<HostRouter>();
        ExchangeRouter.Route(context, hosts);

        long before = GC.GetAllocatedBytesForCurrentThread();
        ExchangeRouter.Route(context, hosts);
        long parsing = GC.GetAllocatedBytesForCurrentThread() - before;
        before = GC.GetAllocatedBytesForCurrentThread();
        ProxyExchange exchange = entry.Enter(context)!;
        long entering = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Same(exchange, context.Features.Get<ProxyExchange>());
        Assert.Equal(("demo", "/x"), (exchange.Session, exchange.BackendTarget));
        Assert.Equal(parsing, entering); // the route's strings only: no decision object, no exchange, no policy lookup
        entry.Leave(exchange);
    }

    private static string Body(HttpContext context) => System.Text.Encoding.UTF8.GetString(((MemoryStream)context.Response.Body).ToArray());

    private async Task<DefaultHttpContext> SendAsync(string target)
    {
        DefaultHttpContext context = Request(target);
        await _pipeline(context);
        return context;
    }

    private DefaultHttpContext Request(string target) => Request(target, _services);

    private static DefaultHttpContext Request(string target, IServiceProvider services)
    {
        var context = new DefaultHttpContext { RequestServices = services };
        context.Request.Method = "GET";
        context.Request.Path = target;
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = target;
        context.Connection.RemoteIpAddress = System.Net.IPAddress.Loopback;
        context.Response.Body = new MemoryStream();
        return context;
    }
}
