using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TestBackend.Diagnostics;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>Limits the server enforces on the public side: request header size and streams per uplink.</summary>
[Collection(TunnelCollection.Name)]
public sealed class LimitsTests(TunnelStackFixture fixture)
{
    [Fact]
    public async Task Request_headers_over_MaxRequestHeadersBytes_get_431_problem_and_smaller_ones_pass()
    {
        using var big = new HttpRequestMessage(HttpMethod.Get, fixture.Url("/loadtest/ping"));
        big.Headers.Add("X-Big", new string('a', 40 * 1024));
        using HttpResponseMessage refused = await fixture.Http.SendAsync(big);

        Assert.Equal(HttpStatusCode.RequestHeaderFieldsTooLarge, refused.StatusCode);
        Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
        Assert.Contains("headers-too-large", await refused.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        using var fine = new HttpRequestMessage(HttpMethod.Get, fixture.Url("/loadtest/ping"));
        fine.Headers.Add("X-Big", new string('a', 8 * 1024));
        using HttpResponseMessage passed = await fixture.Http.SendAsync(fine);
        Assert.Equal(HttpStatusCode.OK, passed.StatusCode);
    }

    [Fact]
    public async Task The_limit_is_configurable()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--ProxyEntry:Limits:MaxRequestHeadersBytes=2048");
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await stack.StartClientAsync(session);

        using var over = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, "/loadtest/ping"));
        over.Headers.Add("X-Big", new string('a', 3000));
        using HttpResponseMessage refused = await fixture.Http.SendAsync(over);

        Assert.Equal(HttpStatusCode.RequestHeaderFieldsTooLarge, refused.StatusCode);
        Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
        Assert.Equal(0, client.Status.RequestsRelayed);
    }

    [Fact]
    public async Task More_requests_than_MaxStreamsPerUplink_get_503_and_the_uplink_stays_up()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Uplink:MaxStreams=2");
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await stack.StartClientAsync(session);
        Uplink uplink = Assert.Single(stack.Registry.GetUplinks(session));
        DelayStatistics waits = stack.Backend.Services.GetService(typeof(DelayStatistics)) as DelayStatistics ?? throw new InvalidOperationException();
        Uri delay = stack.SessionUrl(session, "/loadtest/delay/1500");
        Task<HttpResponseMessage> first = fixture.Http.GetAsync(delay);
        Task<HttpResponseMessage> second = fixture.Http.GetAsync(delay);
        await Eventually.WaitUntilAsync(() => uplink.ActiveStreamCount == 2 && waits.ActiveWaits == 2, "two requests fill the uplink");

        using (HttpResponseMessage third = await fixture.Http.GetAsync(stack.SessionUrl(session, "/loadtest/ping")))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, third.StatusCode);
            Assert.Equal("application/problem+json", third.Content.Headers.ContentType?.MediaType);
            Assert.NotNull(third.Headers.RetryAfter);
            Assert.Contains("stream limit", await third.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        }

        using (HttpResponseMessage one = await first)
        using (HttpResponseMessage two = await second)
        {
            Assert.Equal(HttpStatusCode.OK, one.StatusCode);
            Assert.Equal(HttpStatusCode.OK, two.StatusCode);
        }

        Assert.True(uplink.IsOpen);
        Assert.Same(uplink, Assert.Single(stack.Registry.GetUplinks(session)));
        Assert.Equal(1, client.Status.ConnectCount);
        using HttpResponseMessage after = await fixture.Http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));
        Assert.Equal(HttpStatusCode.OK, after.StatusCode);
    }
}
