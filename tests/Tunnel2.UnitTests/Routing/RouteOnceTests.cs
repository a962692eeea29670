using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.ProxyEntry;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.UnitTests.Routing;

/// <summary>
/// The public entry's pipeline as <c>UseProxyEntry</c> builds it: a request is routed once as it comes in, and that one
/// decision (<see cref="RoutedSession"/>, a feature of the request) is what the rate limiter counts and the forwarder
/// answers for.
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

        RoutedSession routed = first.Features.Get<RoutedSession>()!;
        Assert.Equal(("demo", "/x", RouteStatus.Forward), (routed.Session, routed.BackendTarget, routed.Status));
        Assert.Equal(StatusCodes.Status404NotFound, first.Response.StatusCode); // the forwarder: no client for 'demo'
        Assert.Equal(StatusCodes.Status429TooManyRequests, second.Response.StatusCode); // the limiter: 'demo' spent its token
        Assert.Equal(StatusCodes.Status404NotFound, other.Response.StatusCode);
        Assert.Equal(0, _passedOn);
    }

    [Fact]
    public async Task A_request_that_is_not_the_proxys_goes_on_unrouted_and_uncounted()
    {
        DefaultHttpContext first = await SendAsync("/healthz");
        DefaultHttpContext second = await SendAsync("/healthz");

        Assert.Null(first.Features.Get<RoutedSession>());
        Assert.Equal(StatusCodes.Status200OK, second.Response.StatusCode);
        Assert.Equal(2, _passedOn);
    }

    private async Task<DefaultHttpContext> SendAsync(string target)
    {
        var context = new DefaultHttpContext { RequestServices = _services };
        context.Request.Method = "GET";
        context.Request.Path = target;
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = target;
        context.Connection.RemoteIpAddress = System.Net.IPAddress.Loopback;
        context.Response.Body = new MemoryStream();
        await _pipeline(context);
        return context;
    }
}
