using System.Net;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelClient.Admin;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.EndToEndTests.Observability;

/// <summary>The admin listeners of server and client: Prometheus metrics that move with known traffic, and the admin token.</summary>
public sealed class MetricsTests
{
    private const string AdminToken = "an-admin-token-for-tests";

    [Fact]
    public async Task Metrics_on_the_admin_listener_count_known_traffic_by_session_status_and_direction()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0");
        Uri metrics = new(AdminUrl(stack), "/metrics");
        string session = "metrics-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        using var http = CallerHttp.Create();

        for (int i = 0; i < 7; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        string unknown = "nobody-" + Guid.NewGuid().ToString("N")[..8];
        using (HttpResponseMessage missing = await http.GetAsync(stack.SessionUrl(unknown, "/x")))
        {
            Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
        }

        string text = "";
        await Eventually.WaitUntilAsync(async () =>
        {
            text = await http.GetStringAsync(metrics); // the exporter caches a scrape for 300 ms
            return PrometheusText.Sum(text, "tunnel2_proxy_request_duration_seconds_count", $"tunnel2_session=\"{session}\"") == 7;
        }, "the duration histogram counts the session's seven requests");

        Assert.Equal(7, PrometheusText.Sum(text, "tunnel2_proxy_request_duration_seconds_count", $"tunnel2_session=\"{session}\"", "http_response_status_code=\"200\""));
        Assert.Equal(1, PrometheusText.Sum(text, "tunnel2_proxy_failures_total", "reason=\"tunnel-not-found\"", "http_response_status_code=\"404\""));
        Assert.DoesNotContain(unknown, text, StringComparison.Ordinal); // a made-up id takes no label of its own
        Assert.True(PrometheusText.Sum(text, "tunnel2_proxy_request_duration_seconds_count", "tunnel2_session=\"_unknown\"") >= 1);
        Assert.True(PrometheusText.Sum(text, "tunnel2_proxy_requests_total") >= 7);
        Assert.True(PrometheusText.Sum(text, "http_server_request_duration_seconds_count", "http_response_status_code=\"200\"") >= 7);
        Assert.Equal(1, PrometheusText.Sum(text, "tunnel2_server_uplinks"));
        Assert.Equal(1, PrometheusText.Sum(text, "tunnel2_server_sessions"));
        Assert.True(PrometheusText.Sum(text, "tunnel2_uplink_frames_total", "network_io_direction=\"transmit\"") >= 7);
        Assert.True(PrometheusText.Sum(text, "tunnel2_uplink_bytes_total", "network_io_direction=\"receive\"") > 7 * 9);

        // The admin listener is not a public port: a session path there is the admin's 404, not a tunnel's.
        using HttpResponseMessage notPublic = await http.GetAsync(new Uri(AdminUrl(stack), $"/session/{session}/loadtest/ping"));
        Assert.Equal(HttpStatusCode.NotFound, notPublic.StatusCode);
        using JsonDocument problem = JsonDocument.Parse(await notPublic.Content.ReadAsStringAsync());
        Assert.Equal("urn:tunnel2:problem:not-found", problem.RootElement.GetProperty("type").GetString());
        Assert.Contains("admin listener", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_crowd_of_1000_made_up_session_ids_takes_no_label_and_grows_neither_the_metrics_nor_the_live_feed()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0");
        using var http = new HttpClient(new SocketsHttpHandler { UseCookies = false, MaxConnectionsPerServer = 1000 }) { Timeout = TimeSpan.FromSeconds(60) };
        var crowd = new Task<HttpResponseMessage>[1000];
        for (int i = 0; i < crowd.Length; i++)
        {
            crowd[i] = http.GetAsync(stack.SessionUrl($"made-up-{i}-{Guid.NewGuid():N}", "/x"));
        }

        foreach (HttpResponseMessage response in await Task.WhenAll(crowd))
        {
            using (response)
            {
                Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            }
        }

        Uri admin = AdminUrl(stack);
        string text = "";
        await Eventually.WaitUntilAsync(async () =>
        {
            text = await http.GetStringAsync(new Uri(admin, "/metrics"));
            return PrometheusText.Sum(text, "tunnel2_proxy_request_duration_seconds_count", "tunnel2_session=\"_unknown\"") == 1000;
        }, "the thousand 404s are counted under _unknown");
        Assert.DoesNotContain("made-up-", text, StringComparison.Ordinal);

        using JsonDocument live = JsonDocument.Parse(await http.GetStringAsync(new Uri(admin, "/api/sessions")));
        Assert.Empty(live.RootElement.EnumerateArray().ToArray()); // no session was created by asking for one
    }

    [Fact]
    public async Task With_an_admin_token_a_request_without_it_gets_401_problem_details_and_one_with_it_gets_the_metrics()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0", "--admin-token", AdminToken);
        Uri metrics = new(AdminUrl(stack), "/metrics");
        using var http = CallerHttp.Create();

        using (HttpResponseMessage bare = await http.GetAsync(metrics))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, bare.StatusCode);
            Assert.Equal("application/problem+json", bare.Content.Headers.ContentType?.MediaType);
            Assert.Equal("Bearer", bare.Headers.WwwAuthenticate.ToString());
        }

        foreach (string wrong in new[] { "Bearer not-the-token", "Basic " + AdminToken, "Bearer " + AdminToken + "x" })
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, metrics);
            request.Headers.TryAddWithoutValidation("Authorization", wrong);
            using HttpResponseMessage refused = await http.SendAsync(request);
            Assert.Equal(HttpStatusCode.Unauthorized, refused.StatusCode);
        }

        using var good = new HttpRequestMessage(HttpMethod.Get, metrics);
        good.Headers.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Bearer", AdminToken);
        using HttpResponseMessage answered = await http.SendAsync(good);
        Assert.Equal(HttpStatusCode.OK, answered.StatusCode);
        Assert.Contains("# TYPE", await answered.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_client_serves_its_own_metrics_with_requests_relayed_and_each_backends_health()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend a = await ReplicaBackend.StartAsync("a");
        await using ReplicaBackend b = await ReplicaBackend.StartAsync("b");
        string session = "cmetrics-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartClientAsync(session, a.Url, extraArgs:
            ["--backend", b.Url.ToString().TrimEnd('/'), "--health-path", ReplicaBackend.HealthPath, "--health-interval", "00:00:00.200",
             "--admin-url", "http://127.0.0.1:0", "--admin-token", AdminToken]);
        Uri metrics = new(client.Host.Services.GetRequiredService<ClientAdminListener>().Url!, "/metrics");
        using var http = CallerHttp.Create();
        http.DefaultRequestHeaders.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Bearer", AdminToken);
        for (int i = 0; i < 6; i++)
        {
            Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/work"))).StatusCode);
        }

        b.Healthy = false;
        string text = "";
        await Eventually.WaitUntilAsync(async () =>
        {
            text = await http.GetStringAsync(metrics);
            return PrometheusText.Sum(text, "tunnel2_client_backend_ready", $"tunnel2_backend=\"{Origin(b)}\"") == 0;
        }, "the client's metrics show backend b unready");

        Assert.Equal(6, PrometheusText.Sum(text, "tunnel2_client_requests_total"));
        Assert.Equal(1, PrometheusText.Sum(text, "tunnel2_client_backend_ready", $"tunnel2_backend=\"{Origin(a)}\""));
        Assert.Equal(0, PrometheusText.Sum(text, "tunnel2_client_queued_requests"));
        Assert.Equal(0, PrometheusText.Sum(text, "tunnel2_client_backend_active_requests"));
        Assert.Equal(1, PrometheusText.Sum(text, "tunnel2_client_connects_total"));
        Assert.Equal(1, PrometheusText.Sum(text, "tunnel2_client_uplinks", $"server=\"{stack.TunnelUrl.Authority}\""));
        Assert.True(PrometheusText.Sum(text, "tunnel2_uplink_frames_total", "network_io_direction=\"transmit\"") >= 6);

        http.DefaultRequestHeaders.Authorization = null;
        Assert.Equal(HttpStatusCode.Unauthorized, (await http.GetAsync(metrics)).StatusCode);
    }

    private static string Origin(ReplicaBackend replica) => replica.Url.GetLeftPart(UriPartial.Authority);

    private static Uri AdminUrl(TunnelStack stack) =>
        stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl ?? throw new InvalidOperationException("no admin listener");
}
