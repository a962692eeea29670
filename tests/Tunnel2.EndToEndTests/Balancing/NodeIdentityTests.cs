using System.Net;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.EndToEndTests.Balancing;

/// <summary>
/// A server as one node of several behind a balancer: its name in a response header when asked and in its metrics,
/// and a <c>/healthz</c> that turns 503 the moment it starts draining while what is in flight still finishes.
/// </summary>
public sealed class NodeIdentityTests
{
    [Fact]
    public async Task With_the_node_header_on_every_public_response_names_the_node_and_its_metrics_carry_the_name()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--node-name", "node-a", "--node-header", "true", "--admin-url", "http://127.0.0.1:0");
        string session = "node-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        using var http = CallerHttp.Create();

        using HttpResponseMessage tunnelled = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));
        using HttpResponseMessage unknown = await http.GetAsync(stack.SessionUrl("no-such-session", "/"));
        using HttpResponseMessage health = await http.GetAsync(new Uri(stack.PublicUrl, "/healthz"));

        Assert.Equal(["node-a"], tunnelled.Headers.GetValues("Tunnel2-Node"));
        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        Assert.Equal(["node-a"], unknown.Headers.GetValues("Tunnel2-Node"));
        Assert.Equal(["node-a"], health.Headers.GetValues("Tunnel2-Node"));
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        Assert.Contains("service_instance_id=\"node-a\"", await http.GetStringAsync(new Uri(admin, "/metrics")), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Without_the_node_header_responses_carry_none()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--node-name", "node-b");
        using var http = CallerHttp.Create();

        using HttpResponseMessage health = await http.GetAsync(new Uri(stack.PublicUrl, "/healthz"));

        Assert.False(health.Headers.Contains("Tunnel2-Node"));
    }

    [Fact]
    public async Task A_draining_node_answers_healthz_with_503_at_once_while_the_request_in_flight_finishes()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--node-name", "node-c");
        string session = "drain-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        using var http = CallerHttp.Create();
        Assert.Equal("ok", await http.GetStringAsync(new Uri(stack.PublicUrl, "/healthz")));
        Task<HttpResponseMessage> inFlight = http.GetAsync(stack.SessionUrl(session, "/loadtest/delay/2000"));
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(session)[0].ActiveStreamCount == 1, "the slow request is in flight");

        Task stopping = stack.StopServerAsync();
        using HttpResponseMessage health = await Eventually.ValueAsync(
            () => http.GetAsync(new Uri(stack.PublicUrl, "/healthz")), response => response.StatusCode == HttpStatusCode.ServiceUnavailable,
            "/healthz says the node is draining");

        Assert.False(inFlight.IsCompleted); // it said so while the request was still running, not after
        Assert.Equal("application/problem+json", health.Content.Headers.ContentType?.MediaType);
        using JsonDocument problem = JsonDocument.Parse(await health.Content.ReadAsStringAsync());
        Assert.Contains("node-c", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
        using HttpResponseMessage finished = await inFlight.WaitAsync(TimeSpan.FromSeconds(15));
        Assert.Equal(HttpStatusCode.OK, finished.StatusCode);
        await stopping.WaitAsync(TimeSpan.FromSeconds(30));
    }

    [Fact]
    public async Task A_node_warming_up_is_not_ready_and_calls_an_unknown_session_not_yet_until_its_warm_up_ends()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--node-name", "node-w", "--warm-up", "00:00:05");
        using var http = CallerHttp.Create();
        var healthz = new Uri(stack.PublicUrl, "/healthz");

        using HttpResponseMessage starting = await http.GetAsync(healthz);
        using HttpResponseMessage notYet = await http.GetAsync(stack.SessionUrl("no-such-session", "/"));

        Assert.Equal(HttpStatusCode.ServiceUnavailable, starting.StatusCode);
        using (JsonDocument problem = JsonDocument.Parse(await starting.Content.ReadAsStringAsync()))
        {
            Assert.Equal("urn:tunnel2:problem:warming-up", problem.RootElement.GetProperty("type").GetString());
            Assert.Contains("node-w", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
        }

        Assert.Equal(HttpStatusCode.ServiceUnavailable, notYet.StatusCode);
        Assert.NotNull(notYet.Headers.RetryAfter);
        using (JsonDocument problem = JsonDocument.Parse(await notYet.Content.ReadAsStringAsync()))
        {
            Assert.Equal("urn:tunnel2:problem:warming-up", problem.RootElement.GetProperty("type").GetString());
        }

        // A session whose client is connected is served whether the node is still warming up or not.
        string session = "warm-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl(session, "/loadtest/ping")));

        using HttpResponseMessage ready = await Eventually.ValueAsync(
            () => http.GetAsync(healthz), response => response.StatusCode == HttpStatusCode.OK, "the warm-up ends", TimeSpan.FromSeconds(20));
        using HttpResponseMessage unknown = await http.GetAsync(stack.SessionUrl("no-such-session", "/"));
        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
    }
}
