using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>
/// A half-open uplink (no bytes either way, no FIN, no RST: a vanished NAT entry or a frozen peer) is found by the
/// keep-alive on both ends, its streams fail fast, and service continues on the other replica and the reconnection.
/// </summary>
public sealed class LivenessTests
{
    private const string Session = "liveness";
    // Short, so a frozen peer is found fast, but not so short that a loaded machine (CI beside other builds) stalls a live
    // process past it: at 1 s a live client was once dropped and came back as a second uplink before the test froze it.
    private static readonly TimeSpan KeepAliveTimeout = TimeSpan.FromSeconds(2);

    [Fact]
    public async Task A_blackholed_uplink_fails_its_request_with_502_within_the_keep_alive_timeout_and_the_client_reconnects()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync(
            "--TunnelServer:Uplink:KeepAliveInterval=00:00:00.200", $"--TunnelServer:Uplink:KeepAliveTimeout={KeepAliveTimeout}");
        using var relay = new TcpRelay(new IPEndPoint(IPAddress.Loopback, stack.TunnelUrl.Port));
        string[] clientKeepAlive = ["--TunnelClient:Uplink:KeepAliveInterval=00:00:00.200", $"--TunnelClient:Uplink:KeepAliveTimeout={KeepAliveTimeout}"];
        TunnelClientHandle viaRelay = await stack.StartClientAsync(Session, extraArgs: [.. clientKeepAlive, $"--TunnelClient:Server={relay.Url.GetLeftPart(UriPartial.Authority)}"]);
        Uplink relayedUplink = stack.Registry.GetUplinks(Session).Single();
        using HttpClient http = CallerHttp.Create();
        Task<HttpResponseMessage> inFlight = http.GetAsync(stack.SessionUrl(Session, "/loadtest/delay/3000"));
        await Eventually.WaitUntilAsync(() => stack.Delays.ActiveWaits == 1, "the request reached the backend through the relayed client");
        TunnelClientHandle direct = await stack.StartClientAsync(Session, extraArgs: clientKeepAlive);

        relay.Blackhole();
        var clock = Stopwatch.StartNew();
        using HttpResponseMessage failed = await inFlight.WaitAsync(TimeSpan.FromSeconds(10));
        clock.Stop();

        Assert.Equal(HttpStatusCode.BadGateway, failed.StatusCode);
        Assert.True(clock.Elapsed < KeepAliveTimeout + TimeSpan.FromSeconds(1.5), $"the request failed only after {clock.Elapsed}");
        await Eventually.WaitUntilAsync(() => !stack.Registry.GetUplinks(Session).Contains(relayedUplink), "the server drops the silent uplink", TimeSpan.FromSeconds(3));
        // The client hears nothing either; it gives up on the link, aborts the backend request and dials again.
        await Eventually.WaitUntilAsync(() => viaRelay.Status.ConnectCount == 2 && stack.Registry.GetUplinks(Session).Count == 2,
            "the relayed client reconnects", TimeSpan.FromSeconds(5));
        Assert.Equal(2, relay.AcceptedConnections);
        await Eventually.WaitUntilAsync(() => stack.Delays.CancelledWaits == 1, "the relayed client aborts its backend request", TimeSpan.FromSeconds(3));

        for (int i = 0; i < 20; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(Session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        Assert.True(viaRelay.Status.RequestsRelayed > 0, "the reconnected client serves no requests");
        Assert.True(direct.Status.RequestsRelayed > 0, "the direct client serves no requests");
    }

    [Fact]
    public async Task A_client_frozen_by_SIGSTOP_fails_its_request_with_502_within_the_keep_alive_timeout_and_comes_back_after_SIGCONT()
    {
        const string session = "liveness-sigstop";
        await using TunnelStack stack = await TunnelStack.StartAsync(
            "--TunnelServer:Uplink:KeepAliveInterval=00:00:00.200", $"--TunnelServer:Uplink:KeepAliveTimeout={KeepAliveTimeout}");
        string[] clientKeepAlive = ["--TunnelClient:Uplink:KeepAliveInterval=00:00:00.200", $"--TunnelClient:Uplink:KeepAliveTimeout={KeepAliveTimeout}"];
        await using TunnelProcess frozen = ProcessClients.Start(stack, session, "client A", clientKeepAlive);
        Uplink frozenUplink = await ProcessClients.WaitForNewUplinkAsync(stack, session, [], frozen);
        using HttpClient http = CallerHttp.Create();
        Task<HttpResponseMessage> inFlight = http.GetAsync(stack.SessionUrl(session, "/loadtest/delay/10000"));
        await Eventually.WaitUntilAsync(() => stack.Delays.ActiveWaits == 1, "the request reached the backend through client A");
        TunnelClientHandle healthy = await stack.StartClientAsync(session, extraArgs: clientKeepAlive);
        Uplink healthyUplink = stack.Registry.GetUplinks(session).Single(uplink => uplink != frozenUplink);

        frozen.Signal("STOP");
        try
        {
            var clock = Stopwatch.StartNew();
            using HttpResponseMessage failed = await inFlight.WaitAsync(TimeSpan.FromSeconds(10));
            clock.Stop();

            Assert.Equal(HttpStatusCode.BadGateway, failed.StatusCode);
            Assert.Equal("application/problem+json", failed.Content.Headers.ContentType?.MediaType);
            Assert.True(clock.Elapsed < KeepAliveTimeout + TimeSpan.FromSeconds(1.5), $"the request failed only after {clock.Elapsed}");
            await Eventually.WaitUntilAsync(() => !stack.Registry.GetUplinks(session).Contains(frozenUplink), "the server drops the frozen client's uplink", TimeSpan.FromSeconds(3));

            long relayedBefore = healthy.Status.RequestsRelayed;
            for (int i = 0; i < 10; i++)
            {
                using HttpResponseMessage ping = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));
                Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
            }

            Assert.Equal(relayedBefore + 10, healthy.Status.RequestsRelayed);
        }
        finally
        {
            frozen.Signal("CONT");
        }

        // Thawed, client A finds its uplink closed, aborts the backend request it was relaying and logs in again.
        await ProcessClients.WaitForNewUplinkAsync(stack, session, [frozenUplink, healthyUplink], frozen);
        await Eventually.WaitUntilAsync(() => stack.Delays.CancelledWaits == 1, "client A aborts its backend request", TimeSpan.FromSeconds(5));
        Assert.Equal(0, stack.Delays.CompletedWaits);
    }
}
