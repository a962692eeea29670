using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;
using Serilog.Events;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Sessions;
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

    /// <summary>
    /// How far past the timeout the keep-alive may act: its tick (a quarter of the 200 ms interval, so the 50 ms floor)
    /// and what a busy machine makes a timer late.
    /// </summary>
    private static readonly TimeSpan LateTick = TimeSpan.FromSeconds(1);

    /// <summary>The server logs its uplinks' disconnects, with their reasons, at Information (the tests' servers log warnings only).</summary>
    private const string ServerUplinkLogs = "--Serilog:MinimumLevel:Override:Tunnel2.TunnelServer.Uplinks=Information";

    [Fact]
    public async Task A_blackholed_uplink_fails_its_request_with_502_within_the_keep_alive_timeout_and_the_client_reconnects()
    {
        DateTimeOffset started = DateTimeOffset.Now;
        await using TunnelStack stack = await TunnelStack.StartAsync(
            "--TunnelServer:Uplink:KeepAliveInterval=00:00:00.200", $"--TunnelServer:Uplink:KeepAliveTimeout={KeepAliveTimeout}", ServerUplinkLogs);
        using var relay = new TcpRelay(new IPEndPoint(IPAddress.Loopback, stack.TunnelUrl.Port));
        string[] clientKeepAlive = ["--TunnelClient:Uplink:KeepAliveInterval=00:00:00.200", $"--TunnelClient:Uplink:KeepAliveTimeout={KeepAliveTimeout}"];
        TunnelClientHandle viaRelay = await stack.StartClientAsync(Session, extraArgs: [.. clientKeepAlive, $"--TunnelClient:Server={relay.Url.GetLeftPart(UriPartial.Authority)}"]);
        Uplink relayedUplink = stack.Registry.GetUplinks(Session).Single();
        using HttpClient http = CallerHttp.Create();
        // The backend's wait outlasts the client's finding the link dead (the keep-alive timeout after the blackhole, after
        // the direct client's start), so the client's abort is what ends it: at 3 s a loaded machine could let it finish first.
        Task<HttpResponseMessage> inFlight = http.GetAsync(stack.SessionUrl(Session, "/loadtest/delay/10000"));
        await Eventually.WaitUntilAsync(() => stack.Delays.ActiveWaits == 1, "the request reached the backend through the relayed client");
        TunnelClientHandle direct = await stack.StartClientAsync(Session, extraArgs: clientKeepAlive);

        relay.Blackhole();
        using HttpResponseMessage failed = await inFlight.WaitAsync(TimeSpan.FromSeconds(10));

        await AssertLostUplinkAsync(failed);
        await Eventually.WaitUntilAsync(() => !stack.Registry.GetUplinks(Session).Contains(relayedUplink), "the server drops the silent uplink");
        // Its own keep-alive, or the relayed client's: that one's new login then replaces the silent uplink (seen at load 15).
        string? dropped = await ServerDisconnectReasonAsync(Session, started);
        if (dropped != SessionRegistry.ReplacedReason)
        {
            AssertKeepAliveClosed(dropped, "the server");
        }

        // The client hears nothing either; it gives up on the link, aborts the backend request and dials again.
        await Eventually.WaitUntilAsync(() => viaRelay.Status.ConnectCount == 2 && stack.Registry.GetUplinks(Session).Count == 2, "the relayed client reconnects");
        AssertKeepAliveClosed(viaRelay.Status.LastDisconnectReason, "the relayed client");
        Assert.Equal(2, relay.AcceptedConnections);
        await Eventually.WaitUntilAsync(() => stack.Delays.CancelledWaits == 1, "the relayed client aborts its backend request");
        Assert.Equal(0, stack.Delays.CompletedWaits);

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
        DateTimeOffset started = DateTimeOffset.Now;
        await using TunnelStack stack = await TunnelStack.StartAsync(
            "--TunnelServer:Uplink:KeepAliveInterval=00:00:00.200", $"--TunnelServer:Uplink:KeepAliveTimeout={KeepAliveTimeout}", ServerUplinkLogs);
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
            using HttpResponseMessage failed = await inFlight.WaitAsync(TimeSpan.FromSeconds(10));

            await AssertLostUplinkAsync(failed);
            await Eventually.WaitUntilAsync(() => !stack.Registry.GetUplinks(session).Contains(frozenUplink), "the server drops the frozen client's uplink");
            AssertKeepAliveClosed(await ServerDisconnectReasonAsync(session, started), "the server");

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

    /// <summary>The caller's 502 says the tunnel connection was lost (not the backend, nor a timeout of its own).</summary>
    private static async Task AssertLostUplinkAsync(HttpResponseMessage failed)
    {
        Assert.Equal(HttpStatusCode.BadGateway, failed.StatusCode);
        Assert.Equal("application/problem+json", failed.Content.Headers.ContentType?.MediaType);
        Assert.Contains("urn:tunnel2:problem:uplink-lost", await failed.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    /// <summary>
    /// The keep-alive closed the uplink, by its own measure of the silence ("nothing received for N ms (keep-alive
    /// timeout)"): not before the timeout, and not later than a late tick past it. The process's own figure, since the
    /// test's clock would also count the 502's way back to the caller and this test's turns on a loaded machine.
    /// </summary>
    private static void AssertKeepAliveClosed(string? reason, string who)
    {
        Match silent = Regex.Match(reason ?? "", @"^nothing received for (\d+) ms \(keep-alive timeout\)$");
        Assert.True(silent.Success, $"{who} closed the uplink for another reason: '{reason}'");
        var silence = TimeSpan.FromMilliseconds(long.Parse(silent.Groups[1].Value, CultureInfo.InvariantCulture));
        Assert.True(silence > KeepAliveTimeout && silence <= KeepAliveTimeout + LateTick,
            $"{who} closed the uplink after {silence} of silence, with a keep-alive timeout of {KeepAliveTimeout}");
    }

    /// <summary>Why the server says it lost the session's uplink ("Uplink disconnected"), once it has logged it.</summary>
    private static async Task<string?> ServerDisconnectReasonAsync(string session, DateTimeOffset since)
    {
        string? reason = null;
        await Eventually.WaitUntilAsync(() => (reason = ServerDisconnectReason(session, since)) is not null, $"the server logs why it lost session {session}'s uplink");
        return reason;
    }

    private static string? ServerDisconnectReason(string session, DateTimeOffset since)
    {
        foreach (LogEvent logEvent in CapturedLogs.EventsWhere("SourceContext", "Tunnel2.TunnelServer.Uplinks.UplinkAcceptor"))
        {
            if (logEvent.Timestamp >= since && CapturedLogs.Text(logEvent, "Session") == session && CapturedLogs.Text(logEvent, "Reason") is { } reason)
            {
                return reason;
            }
        }

        return null;
    }
}
