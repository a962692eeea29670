using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Balancing;

/// <summary>
/// A client given <c>--server</c> twice keeps an uplink to each server, so either node serves the session; one that
/// goes away leaves the other serving, and its uplink comes back when it does.
/// </summary>
public sealed class SeveralServersTests
{
    [Fact]
    public async Task A_client_with_two_servers_is_served_through_both_and_the_survivor_serves_while_one_is_down()
    {
        await using TunnelStack first = await TunnelStack.StartAsync();
        await using TunnelStack second = await TunnelStack.StartAsync();
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await first.StartClientAsync(session, extraArgs: ["--server", second.TunnelUrl.ToString().TrimEnd('/')]);
        await Eventually.WaitUntilAsync(() => second.Registry.GetUplinks(session).Count == 1 && client.Status.ConnectedUplinks == 2,
            "an uplink to each server");
        Assert.Single(first.Registry.GetUplinks(session));

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        foreach (TunnelStack node in new[] { first, second })
        {
            using HttpResponseMessage response = await http.GetAsync(node.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal("pong", await response.Content.ReadAsStringAsync());
        }

        await second.StopServerAsync();
        await Eventually.WaitUntilAsync(() => client.Status.ConnectedUplinks == 1, "the client sees the second server go");
        using (HttpResponseMessage response = await http.GetAsync(first.SessionUrl(session, "/loadtest/ping")))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        await second.StartServerAgainAsync();
        await Eventually.WaitUntilAsync(() => second.Registry.GetUplinks(session).Count == 1 && client.Status.ConnectedUplinks == 2,
            "the uplink to the second server comes back");
        using (HttpResponseMessage response = await http.GetAsync(second.SessionUrl(session, "/loadtest/ping")))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
    }

    [Fact]
    public async Task The_concurrency_limit_is_one_limit_across_the_servers()
    {
        await using TunnelStack first = await TunnelStack.StartAsync();
        await using TunnelStack second = await TunnelStack.StartAsync();
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle client = await first.StartClientAsync(session, maxConcurrency: 2,
            extraArgs: ["--server", second.TunnelUrl.ToString().TrimEnd('/'), "--max-queue", "0"]);
        await Eventually.WaitUntilAsync(() => client.Status.ConnectedUplinks == 2, "an uplink to each server");

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        var requests = new List<Task<HttpResponseMessage>>();
        for (int i = 0; i < 3; i++)
        {
            requests.Add(http.GetAsync(first.SessionUrl(session, "/loadtest/delay/3000")));
            requests.Add(http.GetAsync(second.SessionUrl(session, "/loadtest/delay/3000")));
        }

        int ok = 0, refused = 0;
        foreach (HttpResponseMessage response in await Task.WhenAll(requests))
        {
            using (response)
            {
                ok += response.StatusCode == HttpStatusCode.OK ? 1 : 0;
                refused += response.StatusCode == HttpStatusCode.ServiceUnavailable ? 1 : 0;
            }
        }

        // Two slots in all: a limit per server would have let four through.
        Assert.Equal(2, ok);
        Assert.Equal(4, refused);
    }
}
