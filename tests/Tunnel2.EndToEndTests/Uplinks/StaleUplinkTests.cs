using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>A client whose connection went half-open logs in again and replaces its stale uplink at once.</summary>
[Collection(TunnelCollection.Name)]
public sealed class StaleUplinkTests(TunnelStackFixture fixture)
{
    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task A_client_reconnecting_after_its_connection_froze_replaces_the_stale_uplink_at_once()
    {
        string session = Guid.NewGuid().ToString("N");
        using var relay = new TcpRelay(new IPEndPoint(IPAddress.Loopback, Stack.TunnelUrl.Port));
        await using TunnelClientHandle client = await Stack.StartClientAsync(session, extraArgs: [
            $"--TunnelClient:Server={relay.Url.GetLeftPart(UriPartial.Authority)}", // replaces the stack's server (a repeated --server would add one)
            "--TunnelClient:Uplink:KeepAliveInterval=00:00:00.200",
            "--TunnelClient:Uplink:KeepAliveTimeout=00:00:01",
        ]);
        Uplink stale = Assert.Single(Stack.Registry.GetUplinks(session));

        relay.Blackhole(); // existing connections only; the server keeps the uplink (its keep-alive timeout is 45 s); the client hears nothing for 1 s
        var clock = Stopwatch.StartNew();

        await Eventually.WaitUntilAsync(() => client.Status.ConnectCount == 2, "the client gave up on the frozen uplink and logged in again");
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session) is [var only] && only != stale, "the new uplink replaced the stale one");
        await Eventually.WaitUntilAsync(() => !stale.IsOpen, "the registry closed the stale uplink (after swapping in the new one, outside its lock)");
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(15), $"replacement took {clock.Elapsed}");
        Assert.Equal(SessionRegistry.ReplacedReason, stale.CloseReason);

        // Every request reaches the live uplink: none is sent into the frozen one to wait for a timeout.
        using var quick = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        for (int i = 0; i < 10; i++)
        {
            using HttpResponseMessage response = await quick.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
    }

    [Fact]
    public async Task Two_running_clients_of_one_session_are_replicas_not_replacements()
    {
        string session = Guid.NewGuid().ToString("N");
        await using TunnelClientHandle first = await Stack.StartClientAsync(session);
        await using TunnelClientHandle second = await Stack.StartClientAsync(session);

        Assert.Equal(2, Stack.Registry.GetUplinks(session).Count);
        Assert.All(Stack.Registry.GetUplinks(session), uplink => Assert.True(uplink.IsOpen));
    }
}
