using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.TunnelClient.Backends;

namespace Tunnel2.EndToEndTests.Balancing;

/// <summary>
/// Several backends behind one client (<c>--backend</c> given more than once): the client balances them with the
/// server's strategies and affinities, passes over a backend whose probe fails, and moves a request whose backend
/// could not be reached to another.
/// </summary>
public sealed class BackendBalancingTests
{
    private static readonly string[] FastProbe = ["--health-path", ReplicaBackend.HealthPath, "--health-interval", "00:00:00.200"];

    [Fact]
    public async Task Round_robin_spreads_requests_evenly_over_three_backends_given_as_repeated_backend_switches()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using Replicas replicas = await Replicas.StartAsync("a", "b", "c");
        string session = NewSession();
        await StartClientAsync(stack, session, replicas);

        using var http = NewHttp();
        for (int i = 0; i < 300; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/work"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        Assert.All(replicas.All, replica => Assert.Equal(100, replica.Requests));
    }

    [Fact]
    public async Task Weighted_backends_get_requests_in_the_ratio_of_the_weights_in_their_entries()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using Replicas replicas = await Replicas.StartAsync("heavy", "light");
        string session = NewSession();
        await stack.StartClientAsync(session, replicas[1].Url, extraArgs:
            ["--backend", $"{Origin(replicas[0])} weight=3", "--backend-balancing", "Weighted"]);

        using var http = NewHttp();
        for (int i = 0; i < 200; i++)
        {
            Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/work"))).StatusCode);
        }

        Assert.Equal(150, replicas[0].Requests);
        Assert.Equal(50, replicas[1].Requests);
    }

    [Fact]
    public async Task Least_requests_sends_at_least_80_percent_to_the_fast_backend_when_the_other_answers_in_200_ms()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend fast = await ReplicaBackend.StartAsync("fast");
        await using ReplicaBackend slow = await ReplicaBackend.StartAsync("slow", TimeSpan.FromMilliseconds(200));
        string session = NewSession();
        await stack.StartClientAsync(session, fast.Url, extraArgs: ["--backend", Origin(slow), "--backend-balancing", "LeastRequests"]);

        using var http = NewHttp();
        const int Callers = 8, RequestsEach = 40;
        await RequestRuns.GetConcurrentlyAsync(http, stack.SessionUrl(session, "/work"), Callers, RequestsEach);
        Assert.Equal(Callers * RequestsEach, fast.Requests + slow.Requests);
        Assert.True(fast.Requests >= 0.8 * Callers * RequestsEach, $"fast {fast.Requests}, slow {slow.Requests}");
    }

    [Fact]
    public async Task A_backend_that_is_down_costs_no_request_its_connects_move_to_another_and_it_is_ejected()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using Replicas replicas = await Replicas.StartAsync("a", "b");
        Uri down = ReplicaBackend.Unreachable();
        string session = NewSession();
        await stack.StartClientAsync(session, replicas[0].Url, extraArgs:
            ["--backend", Origin(replicas[1]), "--backend", down.ToString().TrimEnd('/'), .. CapturedLogs.ServerArgs]);

        using var http = NewHttp();
        var posts = new List<Task<HttpResponseMessage>>();
        for (int i = 0; i < 60; i++)
        {
            // A POST too: nothing reached the dead backend, so even a request with a body may go to another.
            posts.Add(i % 2 == 0
                ? http.GetAsync(stack.SessionUrl(session, "/work"))
                : http.PostAsync(stack.SessionUrl(session, "/work"), new StringContent("payload")));
        }

        foreach (HttpResponseMessage response in await Task.WhenAll(posts))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            response.Dispose();
        }

        Assert.Equal(60, replicas[0].Requests + replicas[1].Requests);
        Assert.True(replicas[0].Requests > 0 && replicas[1].Requests > 0, $"a {replicas[0].Requests}, b {replicas[1].Requests}");
        await Eventually.WaitUntilAsync(
            () => CapturedLogs.MessagesWhere("SourceContext", "Tunnel2.TunnelClient.Backends").Exists(message =>
                message.Contains("ejected", StringComparison.Ordinal) && message.Contains(down.Authority, StringComparison.Ordinal)),
            "the client logs that the dead backend is ejected");
    }

    [Fact]
    public async Task A_crowd_of_1000_concurrent_requests_loses_none_while_one_of_the_clients_two_backends_is_down_and_one_hangs_up()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend good = await ReplicaBackend.StartAsync("good");
        await using var dying = new HangUpBackend();
        string session = NewSession();
        await stack.StartClientAsync(session, good.Url, maxConcurrency: 1000, extraArgs:
            ["--backend", ReplicaBackend.Unreachable().ToString().TrimEnd('/'), "--backend", dying.Url.ToString().TrimEnd('/')]);
        using var http = new HttpClient(new SocketsHttpHandler { UseCookies = false, MaxConnectionsPerServer = 1000 }) { Timeout = TimeSpan.FromSeconds(60) };

        // All at once, so hundreds are picked for the dead and the hanging-up backend before either is ejected. The server
        // has no other client to retry on, so every GET must reach the good backend through the client alone: a request
        // tries each backend at most once (picked for the dead one, moved to the hanging-up one, then to the good one).
        var crowd = new Task<HttpResponseMessage>[1000];
        for (int i = 0; i < crowd.Length; i++)
        {
            crowd[i] = http.GetAsync(stack.SessionUrl(session, $"/item/{i}"));
        }

        var statuses = new Dictionary<HttpStatusCode, int>();
        foreach (HttpResponseMessage response in await Task.WhenAll(crowd))
        {
            using (response)
            {
                statuses[response.StatusCode] = statuses.GetValueOrDefault(response.StatusCode) + 1;
            }
        }

        Assert.True(statuses.GetValueOrDefault(HttpStatusCode.OK) == 1000, string.Join(", ", statuses.Select(s => $"{(int)s.Key}: {s.Value}")));
        Assert.Equal(1000, good.Requests);
    }

    [Fact]
    public async Task An_idempotent_request_whose_backend_dies_before_answering_goes_to_another_backend_a_post_does_not()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using ReplicaBackend good = await ReplicaBackend.StartAsync("good");
        await using var dying = new HangUpBackend();
        string session = NewSession();
        await stack.StartClientAsync(session, good.Url, extraArgs: ["--backend", dying.Url.ToString().TrimEnd('/')]);

        // Three failures in a row eject the dying backend, so the requests that reach it come first: two GETs, then a POST.
        using var http = NewHttp();
        List<(string Method, HttpStatusCode Status)> reachedDying = await RequestRuns.SendNotingWhichReachedAsync(
            http, stack.SessionUrl(session, "/work"), [HttpMethod.Get, HttpMethod.Get, HttpMethod.Post], dying);

        // A GET that reached it was sent on and answered; a POST may have done its work before the backend died, so it
        // is not sent again and its caller hears 502.
        Assert.Contains(reachedDying, entry => entry.Method == "GET");
        Assert.Contains(reachedDying, entry => entry.Method == "POST");
        Assert.All(reachedDying, entry => Assert.Equal(entry.Method == "GET" ? HttpStatusCode.OK : HttpStatusCode.BadGateway, entry.Status));
        Assert.Equal(2, good.Requests); // the two GETs, not the POST
    }

    [Fact]
    public async Task A_backend_whose_probe_fails_gets_no_requests_and_the_server_hears_unready_only_when_all_fail()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using Replicas replicas = await Replicas.StartAsync("a", "b");
        string session = NewSession();
        TunnelClientHandle client = await StartClientAsync(stack, session, replicas, FastProbe);
        BackendSet backends = client.Host.Services.GetRequiredService<BackendSet>();
        SessionMember member = stack.Registry.GetMembers(session)[0];
        using var http = NewHttp();

        replicas[0].Healthy = false;
        await Eventually.WaitUntilAsync(() => !backends.All[0].IsProbedReady, "the client's probe finds a unready");
        int before = replicas[0].Requests;
        for (int i = 0; i < 30; i++)
        {
            Assert.Equal("b", await http.GetStringAsync(stack.SessionUrl(session, "/work")));
        }

        Assert.Equal(before, replicas[0].Requests);
        Assert.True(member.Uplink.PeerReady, "one backend is still ready, so the client is");

        replicas[1].Healthy = false;
        await Eventually.WaitUntilAsync(() => !member.Uplink.PeerReady, "the server hears that no backend of the client is ready");
        using (HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/work")))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        }

        replicas[0].Healthy = true;
        await Eventually.WaitUntilAsync(() => member.Uplink.PeerReady, "the server hears that a is ready again");
        for (int i = 0; i < 10; i++)
        {
            Assert.Equal("a", await http.GetStringAsync(stack.SessionUrl(session, "/work")));
        }
    }

    [Fact]
    public async Task Cookie_affinity_keeps_a_caller_on_the_backend_that_answered_it_first()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using Replicas replicas = await Replicas.StartAsync("a", "b");
        string session = NewSession();
        await StartClientAsync(stack, session, replicas, "--backend-affinity", "Cookie");

        using var first = new HttpClient(new SocketsHttpHandler { CookieContainer = new CookieContainer() });
        using var second = new HttpClient(new SocketsHttpHandler { CookieContainer = new CookieContainer() });
        using HttpResponseMessage firstAnswer = await first.GetAsync(stack.SessionUrl(session, "/page"));
        using HttpResponseMessage secondAnswer = await second.GetAsync(stack.SessionUrl(session, "/page"));
        string firstBackend = await firstAnswer.Content.ReadAsStringAsync();
        string secondBackend = await secondAnswer.Content.ReadAsStringAsync();

        string setCookie = Assert.Single(firstAnswer.Headers.GetValues("Set-Cookie"));
        Assert.StartsWith("Tunnel2-Backend=", setCookie, StringComparison.Ordinal);
        Assert.Contains($"Path=/session/{session}/", setCookie, StringComparison.Ordinal); // moved under the prefix by path rewriting
        Assert.NotEqual(firstBackend, secondBackend); // round robin placed the two callers on different backends
        for (int i = 0; i < 20; i++)
        {
            using HttpResponseMessage again = await first.GetAsync(stack.SessionUrl(session, "/page"));
            Assert.Equal(firstBackend, await again.Content.ReadAsStringAsync());
            Assert.False(again.Headers.Contains("Set-Cookie"), "a caller already on its backend is not given the cookie again");
            Assert.Equal(secondBackend, await second.GetStringAsync(stack.SessionUrl(session, "/page")));
        }
    }

    [Fact]
    public async Task Header_affinity_sends_each_header_value_to_one_backend_and_spreads_the_values()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using Replicas replicas = await Replicas.StartAsync("a", "b", "c");
        string session = NewSession();
        await StartClientAsync(stack, session, replicas, "--backend-affinity", "Header", "--backend-affinity-header", "X-User");

        using var http = NewHttp();
        var backendOf = new Dictionary<string, string>();
        for (int round = 0; round < 3; round++)
        {
            for (int user = 0; user < 30; user++)
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, "/work"));
                request.Headers.Add("X-User", $"user-{user}");
                using HttpResponseMessage response = await http.SendAsync(request);
                string backend = await response.Content.ReadAsStringAsync();
                Assert.Equal(backendOf.TryAdd($"user-{user}", backend) ? backend : backendOf[$"user-{user}"], backend);
            }
        }

        Assert.Equal(3, backendOf.Values.Distinct().Count());
    }

    [Fact]
    public async Task Client_ip_affinity_keeps_one_caller_address_on_one_backend()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using Replicas replicas = await Replicas.StartAsync("a", "b", "c");
        string session = NewSession();
        await StartClientAsync(stack, session, replicas, "--backend-affinity", "ClientIp");

        using var http = NewHttp();
        for (int i = 0; i < 30; i++)
        {
            Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/work"))).StatusCode);
        }

        // Every request comes from 127.0.0.1, so one backend takes all of them.
        Assert.Single(replicas.All, replica => replica.Requests == 30);
        Assert.Equal(30, replicas.All.Sum(replica => replica.Requests));
    }

    private static Task<TunnelClientHandle> StartClientAsync(TunnelStack stack, string session, Replicas replicas, params string[] extraArgs)
    {
        var args = new List<string>();
        for (int i = 1; i < replicas.All.Count; i++)
        {
            args.Add("--backend");
            args.Add(Origin(replicas[i]));
        }

        args.AddRange(extraArgs);
        return stack.StartClientAsync(session, replicas[0].Url, extraArgs: [.. args]);
    }

    private static string Origin(ReplicaBackend replica) => replica.Url.ToString().TrimEnd('/');

    private static string NewSession() => "bb-" + Guid.NewGuid().ToString("N")[..12];

    private static HttpClient NewHttp() =>
        new(new SocketsHttpHandler { UseCookies = false }) { Timeout = TimeSpan.FromSeconds(30) };

    /// <summary>Backends started together and stopped together (no client of their own: one client serves them all).</summary>
    private sealed class Replicas : IAsyncDisposable
    {
        private readonly List<ReplicaBackend> _all = [];

        public IReadOnlyList<ReplicaBackend> All => _all;

        public ReplicaBackend this[int index] => _all[index];

        public static async Task<Replicas> StartAsync(params string[] names)
        {
            var replicas = new Replicas();
            foreach (string name in names)
            {
                replicas._all.Add(await ReplicaBackend.StartAsync(name));
            }

            return replicas;
        }

        public async ValueTask DisposeAsync()
        {
            foreach (ReplicaBackend replica in _all)
            {
                await replica.DisposeAsync();
            }
        }
    }
}
