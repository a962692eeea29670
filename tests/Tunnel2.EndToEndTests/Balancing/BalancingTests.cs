using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Balancing;

/// <summary>The balancing strategies and affinities across the clients of one session, with real clients and backends.</summary>
public sealed class BalancingTests
{
    [Fact]
    public async Task Least_requests_sends_at_least_80_percent_to_the_fast_replica_when_the_other_answers_in_200_ms()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--balancing", "LeastRequests");
        await using ReplicaBackend fast = await ReplicaBackend.StartAsync("fast");
        await using ReplicaBackend slow = await ReplicaBackend.StartAsync("slow", TimeSpan.FromMilliseconds(200));
        string session = NewSession();
        await stack.StartClientAsync(session, fast.Url);
        await stack.StartClientAsync(session, slow.Url);

        using var http = NewHttp();
        const int Callers = 8, RequestsEach = 40;
        await RequestRuns.GetConcurrentlyAsync(http, stack.SessionUrl(session, "/work"), Callers, RequestsEach);
        Assert.Equal(Callers * RequestsEach, fast.Requests + slow.Requests);
        Assert.True(fast.Requests >= 0.8 * Callers * RequestsEach, $"fast {fast.Requests}, slow {slow.Requests}");
    }

    [Fact]
    public async Task Weighted_clients_get_requests_in_the_ratio_of_their_declared_weights()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--balancing", "Weighted");
        await using ReplicaBackend heavy = await ReplicaBackend.StartAsync("heavy");
        await using ReplicaBackend light = await ReplicaBackend.StartAsync("light");
        string session = NewSession();
        await stack.StartClientAsync(session, heavy.Url, extraArgs: ["--weight", "3"]);
        await stack.StartClientAsync(session, light.Url, extraArgs: ["--weight", "1"]);

        using var http = NewHttp();
        for (int i = 0; i < 200; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/work"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        // The schedule repeats every four picks (three heavy, one light), so 200 picks split exactly.
        Assert.Equal(150, heavy.Requests);
        Assert.Equal(50, light.Requests);
    }

    [Fact]
    public async Task Cookie_affinity_keeps_each_caller_on_the_client_that_answered_it_first()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--affinity", "Cookie");
        string session = NewSession();
        await using ReplicaSet replicas = await ReplicaSet.StartAsync(stack, session, ["a", "b"]);

        using var first = new HttpClient(new SocketsHttpHandler { CookieContainer = new CookieContainer() });
        using var second = new HttpClient(new SocketsHttpHandler { CookieContainer = new CookieContainer() });
        using HttpResponseMessage firstAnswer = await first.GetAsync(stack.SessionUrl(session, "/page"));
        using HttpResponseMessage secondAnswer = await second.GetAsync(stack.SessionUrl(session, "/page"));
        string firstReplica = await firstAnswer.Content.ReadAsStringAsync();
        string secondReplica = await secondAnswer.Content.ReadAsStringAsync();

        string setCookie = Assert.Single(firstAnswer.Headers.GetValues("Set-Cookie"));
        Assert.StartsWith("Tunnel2-Affinity=", setCookie, StringComparison.Ordinal);
        Assert.Contains($"Path=/session/{session}/", setCookie, StringComparison.Ordinal);
        Assert.NotEqual(firstReplica, secondReplica); // round robin placed the two callers on different clients
        for (int i = 0; i < 20; i++)
        {
            using HttpResponseMessage again = await (i % 2 == 0 ? first : second).GetAsync(stack.SessionUrl(session, "/page"));
            Assert.Equal(i % 2 == 0 ? firstReplica : secondReplica, await again.Content.ReadAsStringAsync());
            Assert.False(again.Headers.Contains("Set-Cookie"), "a caller whose cookie still names a ready client gets no new one");
        }
    }

    [Fact]
    public async Task Header_affinity_sends_each_key_to_one_client_and_spreads_the_keys()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--affinity", "Header", "--affinity-header", "X-User");
        string session = NewSession();
        await using ReplicaSet replicas = await ReplicaSet.StartAsync(stack, session, ["a", "b", "c"]);

        using var http = NewHttp();
        var replicaOfKey = new Dictionary<string, string>();
        for (int round = 0; round < 3; round++)
        {
            for (int key = 0; key < 30; key++)
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, "/work"));
                request.Headers.Add("X-User", $"user-{key}");
                using HttpResponseMessage response = await http.SendAsync(request);
                string replica = await response.Content.ReadAsStringAsync();
                Assert.Equal(replicaOfKey.GetValueOrDefault($"user-{key}", replica), replica);
                replicaOfKey[$"user-{key}"] = replica;
            }
        }

        Assert.True(replicaOfKey.Values.Distinct().Count() >= 2, "thirty keys all hashed to one client");
    }

    [Fact]
    public async Task Client_ip_affinity_keeps_one_caller_address_on_one_client()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--affinity", "ClientIp");
        string session = NewSession();
        await using ReplicaSet replicas = await ReplicaSet.StartAsync(stack, session, ["a", "b"]);

        using var http = NewHttp();
        for (int i = 0; i < 20; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/work"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        // Every request came from 127.0.0.1: one client took them all, where round robin would have split them.
        Assert.Equal(20, Math.Max(replicas[0].Requests, replicas[1].Requests));
    }

    private static string NewSession() => "lb-" + Guid.NewGuid().ToString("N")[..12];

    private static HttpClient NewHttp() =>
        new(new SocketsHttpHandler { UseCookies = false, MaxConnectionsPerServer = 100 }) { Timeout = TimeSpan.FromSeconds(30) };
}
