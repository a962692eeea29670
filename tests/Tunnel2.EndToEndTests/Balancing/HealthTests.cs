using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Balancing;

namespace Tunnel2.EndToEndTests.Balancing;

/// <summary>
/// Backend health: the client's probe (<c>--health-path</c>) tells the server ready or unready over the uplink, the
/// server passes over unready clients and ejects one whose backend keeps failing, and a GET that could not reach one
/// client's backend is retried once on another.
/// </summary>
public sealed class HealthTests
{
    private static readonly string[] FastProbe = ["--health-path", ReplicaBackend.HealthPath, "--health-interval", "00:00:00.200"];

    [Fact]
    public async Task An_unready_client_gets_no_requests_until_its_probe_passes_again()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        string session = NewSession();
        await using ReplicaSet replicas = await ReplicaSet.StartAsync(stack, session, ["a", "b"], FastProbe);
        ReplicaBackend a = replicas[0];
        SessionMember memberA = MemberAt(stack, session, 0);
        using var http = NewHttp();

        a.Healthy = false;
        var clock = Stopwatch.StartNew();
        await Eventually.WaitUntilAsync(() => !memberA.Uplink.PeerReady, "the server hears that a's backend is unready");
        TimeSpan noticed = clock.Elapsed;
        int before = a.Requests;
        for (int i = 0; i < 40; i++)
        {
            Assert.Equal("b", await http.GetStringAsync(stack.SessionUrl(session, "/work")));
        }

        Assert.Equal(before, a.Requests);

        a.Healthy = true;
        await Eventually.WaitUntilAsync(() => memberA.Uplink.PeerReady, "the server hears that a's backend is ready again");
        for (int i = 0; i < 40; i++)
        {
            await http.GetStringAsync(stack.SessionUrl(session, "/work"));
        }

        Assert.Equal(before + 20, a.Requests); // round robin again
        Assert.True(noticed < TimeSpan.FromSeconds(5), $"took {noticed} to notice with a 200 ms interval");
    }

    [Fact]
    public async Task A_session_whose_every_client_is_unready_answers_503_problem_details_not_502()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend a = await ReplicaBackend.StartAsync("a");
        string session = NewSession();
        await stack.StartClientAsync(session, a.Url, extraArgs: FastProbe);
        SessionMember member = MemberAt(stack, session, 0);

        a.Healthy = false;
        await Eventually.WaitUntilAsync(() => !member.Uplink.PeerReady, "the server hears that the backend is unready");
        using var http = NewHttp();
        using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/work"));

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.NotNull(response.Headers.RetryAfter);
        using JsonDocument problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal("urn:tunnel2:problem:no-ready-client", problem.RootElement.GetProperty("type").GetString());
        Assert.Equal(0, a.Requests);
    }

    [Fact]
    public async Task A_client_whose_backend_is_down_at_start_logs_in_unready_and_serves_once_it_is_up()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend a = await ReplicaBackend.StartAsync("a");
        a.Healthy = false;
        string session = NewSession();
        await stack.StartClientAsync(session, a.Url, extraArgs: FastProbe);
        SessionMember member = MemberAt(stack, session, 0);
        Assert.False(member.Uplink.PeerReady, "the login said unready");

        using var http = NewHttp();
        using (HttpResponseMessage refused = await http.GetAsync(stack.SessionUrl(session, "/work")))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        }

        a.Healthy = true;
        await Eventually.WaitUntilAsync(() => member.Uplink.PeerReady, "the server hears that the backend is ready");
        Assert.Equal("a", await http.GetStringAsync(stack.SessionUrl(session, "/work")));
    }

    [Fact]
    public async Task A_get_whose_client_cannot_reach_its_backend_is_retried_on_another_client_and_that_client_is_ejected()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend b = await ReplicaBackend.StartAsync("b");
        string session = NewSession();
        Uri down = ReplicaBackend.Unreachable();
        await stack.StartClientAsync(session, down);
        await stack.StartClientAsync(session, b.Url);
        using var http = NewHttp();

        // A body may have reached the backend in part: a POST is not retried, so one of two (round robin) gets the 502.
        var statuses = new List<HttpStatusCode>();
        for (int i = 0; i < 2; i++)
        {
            using HttpResponseMessage post = await http.PostAsync(stack.SessionUrl(session, "/form"), new StringContent("x=1"));
            statuses.Add(post.StatusCode);
        }

        Assert.Contains(HttpStatusCode.OK, statuses);
        Assert.Contains(HttpStatusCode.BadGateway, statuses);

        for (int i = 0; i < 30; i++)
        {
            using HttpResponseMessage get = await http.GetAsync(stack.SessionUrl(session, "/page"));
            Assert.Equal(HttpStatusCode.OK, get.StatusCode);
            Assert.Equal("b", await get.Content.ReadAsStringAsync());
        }

        Assert.Contains(CapturedLogs.MessagesWhere("Session", session), message => message.Contains("passed over for", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_crowd_of_1000_concurrent_gets_loses_none_while_one_of_two_clients_has_lost_its_backend()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend b = await ReplicaBackend.StartAsync("b");
        string session = NewSession();
        await stack.StartClientAsync(session, ReplicaBackend.Unreachable());
        await stack.StartClientAsync(session, b.Url);
        using var http = new HttpClient(new SocketsHttpHandler { UseCookies = false, MaxConnectionsPerServer = 1000 }) { Timeout = TimeSpan.FromSeconds(60) };

        // All at once, so hundreds reach the dead client's uplink before its ejection: each is retried on the other.
        Task<HttpResponseMessage>[] crowd = new Task<HttpResponseMessage>[1000];
        for (int i = 0; i < crowd.Length; i++)
        {
            crowd[i] = http.GetAsync(stack.SessionUrl(session, $"/item/{i}"));
        }

        foreach (HttpResponseMessage response in await Task.WhenAll(crowd))
        {
            using (response)
            {
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                Assert.Equal("b", await response.Content.ReadAsStringAsync());
            }
        }

        Assert.Equal(1000, b.Requests);
        Assert.Contains(CapturedLogs.MessagesWhere("Session", session), message => message.Contains("passed over for", StringComparison.Ordinal));
    }

    [Fact]
    public async Task An_idempotent_request_whose_backend_dies_before_answering_is_retried_on_another_client_a_post_is_not()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend good = await ReplicaBackend.StartAsync("good");
        await using var dying = new HangUpBackend();
        string session = NewSession();
        await stack.StartClientAsync(session, good.Url);
        await stack.StartClientAsync(session, dying.Url);

        // Three failures in a row eject the dying client, so the requests that reach it come first: two GETs, then a POST.
        using var http = NewHttp();
        List<(string Method, HttpStatusCode Status)> reachedDying = await RequestRuns.SendNotingWhichReachedAsync(
            http, stack.SessionUrl(session, "/work"), [HttpMethod.Get, HttpMethod.Get, HttpMethod.Post, HttpMethod.Post], dying);

        // A GET that reached it was sent on and answered; a POST may have done its work before the backend died, so it
        // is not sent again and its caller hears 502.
        Assert.Contains(reachedDying, entry => entry.Method == "GET");
        Assert.Contains(reachedDying, entry => entry.Method == "POST");
        Assert.All(reachedDying, entry => Assert.Equal(entry.Method == "GET" ? HttpStatusCode.OK : HttpStatusCode.BadGateway, entry.Status));
    }

    /// <summary>The session's member for the client started <paramref name="index"/>th (one uplink each, in login order).</summary>
    private static SessionMember MemberAt(TunnelStack stack, string session, int index)
    {
        IReadOnlyList<SessionMember> members = stack.Registry.GetMembers(session);
        Assert.True(members.Count > index, $"{members.Count} clients registered");
        return members[index];
    }

    private static string NewSession() => "hl-" + Guid.NewGuid().ToString("N")[..12];

    private static HttpClient NewHttp() =>
        new(new SocketsHttpHandler { UseCookies = false }) { Timeout = TimeSpan.FromSeconds(30) };
}
