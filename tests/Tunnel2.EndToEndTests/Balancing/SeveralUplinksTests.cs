using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.EndToEndTests.Balancing;

/// <summary>A client started with <c>--uplinks N</c> logs in N times; the server spreads the session's streams over them.</summary>
[Collection(TunnelCollection.Name)]
public sealed class SeveralUplinksTests(TunnelStackFixture fixture)
{
    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task A_client_with_three_uplinks_registers_three_and_the_session_streams_are_spread_over_them()
    {
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await Stack.StartClientAsync(session, extraArgs: ["--uplinks", "3"]);
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 3 && client.Status.ConnectedUplinks == 3,
            "all three uplinks are up");
        IReadOnlyList<Uplink> uplinks = Stack.Registry.GetUplinks(session);

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        Task<HttpResponseMessage>[] requests = new Task<HttpResponseMessage>[30];
        for (int i = 0; i < requests.Length; i++)
        {
            requests[i] = http.GetAsync(Stack.SessionUrl(session, "/loadtest/delay/1500"));
        }

        // Round robin puts 10 on each; every uplink must carry some while they wait at the backend.
        await Eventually.WaitUntilAsync(() => uplinks[0].ActiveStreamCount >= 5 && uplinks[1].ActiveStreamCount >= 5 && uplinks[2].ActiveStreamCount >= 5,
            "each uplink carries a share of the 30 requests");
        foreach (HttpResponseMessage response in await Task.WhenAll(requests))
        {
            using (response)
            {
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            }
        }
    }

    [Fact]
    public async Task The_concurrency_limit_is_one_limit_across_the_uplinks()
    {
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await Stack.StartClientAsync(session, maxConcurrency: 4, extraArgs: ["--uplinks", "3", "--max-queue", "0"]);
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 3, "all three uplinks are up");

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        Task<HttpResponseMessage>[] requests = new Task<HttpResponseMessage>[12];
        for (int i = 0; i < requests.Length; i++)
        {
            requests[i] = http.GetAsync(Stack.SessionUrl(session, "/loadtest/delay/3000"));
        }

        int ok = 0, refused = 0;
        foreach (HttpResponseMessage response in await Task.WhenAll(requests))
        {
            using (response)
            {
                if (response.StatusCode == HttpStatusCode.OK)
                {
                    ok++;
                }
                else if (response.StatusCode == HttpStatusCode.ServiceUnavailable)
                {
                    refused++;
                }
            }
        }

        // Four slots in all: a limit per uplink would have let all twelve through.
        Assert.Equal(4, ok);
        Assert.Equal(8, refused);
    }

    [Fact]
    public async Task When_one_of_three_uplinks_drops_the_others_keep_serving_and_only_that_one_logs_in_again()
    {
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await Stack.StartClientAsync(session, extraArgs: ["--uplinks", "3"]);
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 3, "all three uplinks are up");
        IReadOnlyList<Uplink> before = Stack.Registry.GetUplinks(session);

        before[1].Close("test: one uplink drops");
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        for (int i = 0; i < 10; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 3 && client.Status.ConnectCount == 4,
            "the dropped uplink logged in again");
        IReadOnlyList<Uplink> after = Stack.Registry.GetUplinks(session);
        Assert.Contains(before[0], after);
        Assert.Contains(before[2], after);
        Assert.DoesNotContain(before[1], after);
        Assert.True(before[0].IsOpen && before[2].IsOpen);
    }
}
