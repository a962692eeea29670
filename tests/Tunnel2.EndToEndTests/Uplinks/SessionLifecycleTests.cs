using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>Replicas, clients coming and going, unreachable backends and lost uplinks.</summary>
[Collection(TunnelCollection.Name)]
public sealed class SessionLifecycleTests(TunnelStackFixture fixture)
{
    /// <summary>A stop that cuts the uplink at once (no graceful drain), to stand for an uplink lost mid-exchange.</summary>
    private static readonly string[] NoDrain = ["--drain-timeout", "00:00:00"];

    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task Two_clients_of_one_session_share_its_requests_round_robin()
    {
        string session = NewSession();
        await using TunnelClientHandle first = await Stack.StartClientAsync(session);
        await using TunnelClientHandle second = await Stack.StartClientAsync(session);

        for (int i = 0; i < 20; i++)
        {
            using HttpResponseMessage response = await fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        Assert.Equal(10, first.Status.RequestsRelayed);
        Assert.Equal(10, second.Status.RequestsRelayed);
    }

    [Fact]
    public async Task Unknown_session_gets_404_problem_at_once()
    {
        using HttpResponseMessage response = await fixture.Http.GetAsync(Stack.SessionUrl(NewSession(), "/loadtest/ping"));

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains("Tunnel not found", await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_stopped_client_gives_404_then_service_resumes_when_a_client_reconnects()
    {
        string session = NewSession();
        TunnelClientHandle client = await Stack.StartClientAsync(session);
        Assert.Equal(HttpStatusCode.OK, await StatusOfAsync(session));

        await client.DisposeAsync();
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 0, "the server dropped the stopped client's uplink");
        Assert.Equal(HttpStatusCode.NotFound, await StatusOfAsync(session));

        await using TunnelClientHandle again = await Stack.StartClientAsync(session);
        Assert.Equal(HttpStatusCode.OK, await StatusOfAsync(session));
    }

    [Fact]
    public async Task Backend_unreachable_from_the_client_gives_502_problem()
    {
        string session = NewSession();
        var closedPort = new Uri($"http://127.0.0.1:{FreePort()}");
        await using TunnelClientHandle client = await Stack.StartClientAsync(session, closedPort);

        using HttpResponseMessage response = await fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));

        Assert.Equal(HttpStatusCode.BadGateway, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains("Backend unreachable", await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Uplink_lost_before_the_response_head_gives_502_and_the_server_stays_up()
    {
        string session = NewSession();
        TunnelClientHandle client = await Stack.StartClientAsync(session, extraArgs: NoDrain);
        Task<HttpResponseMessage> pending = fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/delay/10000"));
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Sum(u => u.ActiveStreamCount) == 1, "the request is in flight");

        await client.DisposeAsync();

        using HttpResponseMessage response = await pending.WaitAsync(TimeSpan.FromSeconds(5));
        Assert.Equal(HttpStatusCode.BadGateway, response.StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await fixture.Http.GetAsync(fixture.Url("/loadtest/ping"))).StatusCode);
    }

    [Fact]
    public async Task Uplink_lost_mid_body_aborts_the_callers_response()
    {
        string session = NewSession();
        TunnelClientHandle client = await Stack.StartClientAsync(session, extraArgs: NoDrain);
        using HttpResponseMessage response = await fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/bytes/10000000000"), HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Stream body = await response.Content.ReadAsStreamAsync();
        byte[] buffer = new byte[64 * 1024];
        Assert.True(await body.ReadAsync(buffer) > 0);

        await client.DisposeAsync();

        await Assert.ThrowsAnyAsync<IOException>(async () => await body.CopyToAsync(Stream.Null).WaitAsync(TimeSpan.FromSeconds(30)));
    }

    private async Task<HttpStatusCode> StatusOfAsync(string session)
    {
        using HttpResponseMessage response = await fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));
        return response.StatusCode;
    }

    private static string NewSession() => Guid.NewGuid().ToString();

    private static int FreePort()
    {
        using var listener = new System.Net.Sockets.TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
