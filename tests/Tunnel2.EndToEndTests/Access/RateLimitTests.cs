using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>
/// The public rate limits (ASP.NET Core's rate limiter, token buckets): a visitor or a session over its allowance gets
/// 429 problem+json with Retry-After and its request reaches no backend, while other visitors and sessions go on.
/// </summary>
public sealed class RateLimitTests
{
    [Fact]
    public async Task A_visitor_over_its_bucket_gets_429_and_another_visitor_is_served_meanwhile()
    {
        await using LimitedStack limited = await LimitedStack.StartAsync(
            "--ProxyEntry:RateLimits:PerVisitor:PerSecond=1", "--ProxyEntry:RateLimits:PerVisitor:Burst=3", "--ProxyEntry:TrustedProxies:0=127.0.0.1/32");
        (TunnelStack stack, RecordingBackend backend) = (limited.Stack, limited.Backend);
        string session = await limited.ServeAsync("limited-");
        using var http = new HttpClient();

        (int served, int refused, TimeSpan elapsed) = await BurstAsync(http, stack, session, count: 10);
        var other = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, "/other"));
        other.Headers.Add("X-Forwarded-For", "10.20.30.40");
        HttpResponseMessage otherAnswer = await http.SendAsync(other);

        Assert.True(refused > 0, "some of 10 quick requests over a bucket of 3 are refused");
        Assert.InRange(served, 3, 3 + (int)Math.Ceiling(elapsed.TotalSeconds) + 1);
        Assert.Equal(served, backend.Received.Count(r => r.Target.StartsWith("/burst", StringComparison.Ordinal)));
        Assert.Equal(HttpStatusCode.OK, otherAnswer.StatusCode);
    }

    [Fact]
    public async Task A_session_over_its_bucket_gets_429_and_another_session_is_served_meanwhile()
    {
        await using LimitedStack limited = await LimitedStack.StartAsync(
            "--ProxyEntry:SessionDefaults:RateLimit:PerSecond=1", "--ProxyEntry:SessionDefaults:RateLimit:Burst=3");
        TunnelStack stack = limited.Stack;
        string busy = await limited.ServeAsync("busy-");
        string quiet = await limited.ServeAsync("quiet-");
        using var http = new HttpClient();

        (_, int refused, _) = await BurstAsync(http, stack, busy, count: 10);

        Assert.True(refused > 0, "some of 10 quick requests over a bucket of 3 are refused");
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(quiet, "/ping"))).StatusCode);
    }

    [Fact]
    public async Task A_crowd_of_1000_requests_from_one_visitor_is_held_to_its_bucket_while_20_other_visitors_are_all_served()
    {
        await using LimitedStack limited = await LimitedStack.StartAsync(
            "--ProxyEntry:RateLimits:PerVisitor:PerSecond=50", "--ProxyEntry:RateLimits:PerVisitor:Burst=50", "--ProxyEntry:TrustedProxies:0=127.0.0.1/32");
        (TunnelStack stack, RecordingBackend backend) = (limited.Stack, limited.Backend);
        string session = await limited.ServeAsync("crowded-");
        using var http = new HttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = 200 });

        async Task<HttpStatusCode> SendAsync(string path, string visitor)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, path));
            request.Headers.Add("X-Forwarded-For", visitor);
            using HttpResponseMessage response = await http.SendAsync(request);
            return response.StatusCode;
        }

        var clock = Stopwatch.StartNew();
        using var gate = new SemaphoreSlim(100);
        Task<HttpStatusCode>[] flood = [.. Enumerable.Range(0, 1000).Select(async i =>
        {
            await gate.WaitAsync();
            try
            {
                return await SendAsync($"/flood/{i}", "10.0.0.1");
            }
            finally
            {
                gate.Release();
            }
        })];
        Task<HttpStatusCode[]>[] probes = [.. Enumerable.Range(1, 20).Select(async visitor =>
        {
            var answers = new HttpStatusCode[5];
            for (int i = 0; i < answers.Length; i++)
            {
                answers[i] = await SendAsync($"/probe/{visitor}/{i}", $"10.1.0.{visitor}");
            }

            return answers;
        })];
        HttpStatusCode[] flooded = await Task.WhenAll(flood);
        HttpStatusCode[][] probed = await Task.WhenAll(probes);
        TimeSpan elapsed = clock.Elapsed;

        Assert.All(probed.SelectMany(answers => answers), status => Assert.Equal(HttpStatusCode.OK, status));
        int floodServed = flooded.Count(status => status == HttpStatusCode.OK);
        Assert.Equal(1000, floodServed + flooded.Count(status => status == HttpStatusCode.TooManyRequests));
        Assert.InRange(floodServed, 50, 50 + (int)Math.Ceiling(elapsed.TotalSeconds * 50) + 10);
        Assert.Equal(floodServed, backend.Received.Count(r => r.Target.StartsWith("/flood/", StringComparison.Ordinal)));
    }

    private static async Task<(int Served, int Limited, TimeSpan Elapsed)> BurstAsync(HttpClient http, TunnelStack stack, string session, int count)
    {
        int served = 0, limited = 0;
        var clock = Stopwatch.StartNew();
        for (int i = 0; i < count; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, $"/burst/{i}"));
            if (response.StatusCode == HttpStatusCode.OK)
            {
                served++;
                continue;
            }

            Assert.Equal(HttpStatusCode.TooManyRequests, response.StatusCode);
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
            Assert.True(response.Headers.RetryAfter?.Delta >= TimeSpan.FromSeconds(1));
            using JsonDocument problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
            Assert.Equal("urn:tunnel2:problem:rate-limited", problem.RootElement.GetProperty("type").GetString());
            limited++;
        }

        return (served, limited, clock.Elapsed);
    }

    /// <summary>A stack with the limits under test and one recording backend behind every session it serves.</summary>
    private sealed class LimitedStack(TunnelStack stack, RecordingBackend backend) : IAsyncDisposable
    {
        public TunnelStack Stack { get; } = stack;

        public RecordingBackend Backend { get; } = backend;

        public static async Task<LimitedStack> StartAsync(params string[] serverArgs) =>
            new(await TunnelStack.StartAsync(serverArgs), await RecordingBackend.StartAsync());

        public async Task<string> ServeAsync(string prefix)
        {
            string session = prefix + Guid.NewGuid().ToString("N")[..8];
            await Stack.StartClientAsync(session, Backend.Url);
            return session;
        }

        public async ValueTask DisposeAsync()
        {
            await Stack.DisposeAsync();
            await Backend.DisposeAsync();
        }
    }
}
