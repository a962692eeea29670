using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>Clients ride out a server restart, retry refusals that may pass, and stop on those that cannot.</summary>
[Collection(TunnelCollection.Name)]
public sealed class ReconnectTests(TunnelStackFixture fixture)
{
    /// <summary>The backoff cap TunnelStack gives its clients (TunnelClient:Uplink:ReconnectMaxDelay).</summary>
    private static readonly TimeSpan BackoffCap = TimeSpan.FromMilliseconds(500);

    /// <summary>
    /// How late a backoff's timer may fire, plus a dial and a login, on a busy machine (a 2-core one at load 17-21 took up
    /// to 1.6 s; idle, under 0.1 s).
    /// </summary>
    private static readonly TimeSpan Redial = TimeSpan.FromSeconds(3);

    /// <summary>The server logs each request it finished ("Request finished", with its own measure of the time it took).</summary>
    private const string RequestLogs = "--Serilog:MinimumLevel:Override:Microsoft.AspNetCore.Hosting.Diagnostics=Information";

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task Across_a_server_restart_callers_fail_fast_get_404_in_the_gap_and_clients_return_within_the_backoff_cap(string transport)
    {
        await using TunnelStack stack = await TunnelStack.StartAsync(RequestLogs, $"--TunnelServer:Public:Transport={transport}");
        using var relay = new TcpRelay(new IPEndPoint(IPAddress.Loopback, stack.TunnelUrl.Port));
        string direct = "restart-direct-" + transport.ToLowerInvariant();
        string held = "restart-held-" + transport.ToLowerInvariant();
        TunnelClientHandle directClient = await stack.StartClientAsync(direct, extraArgs: [ClientDials.Logs]);
        TunnelClientHandle heldClient = await stack.StartClientAsync(held, extraArgs: [$"--TunnelClient:Server={relay.Url.GetLeftPart(UriPartial.Authority)}"]);
        using HttpClient http = CallerHttp.Create();
        Assert.Equal(HttpStatusCode.OK, await PingAsync(http, stack, direct));
        Assert.Equal(HttpStatusCode.OK, await PingAsync(http, stack, held));
        relay.HoldNewConnections(); // the relayed client's redials wait at the relay: a server that is up but not yet rejoined

        DateTimeOffset stopping = DateTimeOffset.Now;
        await stack.StopServerAsync();
        await Eventually.WaitUntilAsync(() => !directClient.Status.IsConnected && !heldClient.Status.IsConnected, "both clients lose their uplink");
        var down = Stopwatch.StartNew();
        await Assert.ThrowsAsync<HttpRequestException>(() => http.GetAsync(stack.SessionUrl(direct, "/loadtest/ping")));
        Assert.True(down.Elapsed < TimeSpan.FromSeconds(2), $"a caller waited {down.Elapsed} on a stopped server");
        // Down until the direct client's backoff has reached its cap: uncapped, its fifth retry would wait 0.8-1.6 s.
        await Eventually.WaitUntilAsync(() => ClientDials.To(stack.TunnelUrl, stopping).Retries.Count >= 5, "the direct client's backoff reaches its cap");

        await stack.StartServerAgainAsync();
        DateTimeOffset restarted = DateTimeOffset.Now;
        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(HttpStatusCode.NotFound, await PingAsync(http, stack, held));
        }

        // The server writes its request log once the answer is sent (with the loop transport, a moment later, off the loop).
        await Eventually.WaitUntilAsync(() => ServerTimes(held, restarted).Count >= 3, "the server logs the three requests it finished");
        AssertAnsweredAtOnce(ServerTimes(held, restarted), 3);

        // The server registers the uplink before the client has its answer and logs that it is connected.
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(direct).Count == 1 && ClientDials.To(stack.TunnelUrl, stopping).Connects.Count == 1,
            "the direct client returns");
        AssertReturnedWithinTheBackoffCap(ClientDials.To(stack.TunnelUrl, stopping), restarted);
        Assert.Equal(HttpStatusCode.OK, await PingAsync(http, stack, direct));

        relay.ReleaseNewConnections();
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(held).Count == 1, "the held client returns", TimeSpan.FromSeconds(5));
        Assert.Equal(HttpStatusCode.OK, await PingAsync(http, stack, held));
        Assert.Equal(2, directClient.Status.ConnectCount);
        Assert.Equal(2, heldClient.Status.ConnectCount);
    }

    [Theory]
    [InlineData(503)]
    [InlineData(429)]
    public async Task A_tunnel_endpoint_refusing_with_a_temporary_status_is_retried(int status)
    {
        await using FixedAnswerEndpoint endpoint = await FixedAnswerEndpoint.StartAsync(status);
        await using TunnelClientHandle client = fixture.Stack.StartClientWithoutWaiting(
            $"refused-{status}", extraArgs: [$"--TunnelClient:Server={endpoint.Url.GetLeftPart(UriPartial.Authority)}"]);
        await client.StartAsync();

        await Eventually.WaitUntilAsync(() => endpoint.Requests >= 4, "the client keeps retrying");

        Assert.False(client.Stopping.IsCancellationRequested, "the client gave up on a temporary refusal");
        Assert.Equal(0, client.Status.ExitCode);
        Assert.Equal(0, client.Status.ConnectCount);
        Assert.Contains(status.ToString(System.Globalization.CultureInfo.InvariantCulture), client.Status.LastDisconnectReason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_tunnel_endpoint_answering_403_stops_the_client_with_exit_code_3()
    {
        await using FixedAnswerEndpoint endpoint = await FixedAnswerEndpoint.StartAsync(403);
        await using TunnelClientHandle client = fixture.Stack.StartClientWithoutWaiting(
            "refused-403", extraArgs: [$"--TunnelClient:Server={endpoint.Url.GetLeftPart(UriPartial.Authority)}"]);
        await client.StartAsync();

        await Eventually.WaitUntilAsync(() => client.Stopping.IsCancellationRequested, "the client gives up on a forbidden token");

        Assert.Equal(3, client.Status.ExitCode);
        Assert.Equal(1, endpoint.Requests);
        Assert.Equal(0, client.Status.ConnectCount);
    }

    /// <summary>
    /// The direct client was retrying all along, so it is back within one backoff wait (at most the cap) and a redial of
    /// the server's return. Read from the client's own log: every wait it chose is within the cap, no dial failed against
    /// the restarted server (a refusal logged after the restart is a dial to the closed port, logged late), and it was up
    /// within the last wait plus a redial of the last refusal (which came before the restart). A stopwatch here would also
    /// count what this test does meanwhile (the 404s, the polling).
    /// </summary>
    private static void AssertReturnedWithinTheBackoffCap(ClientDials dials, DateTimeOffset restarted)
    {
        Assert.NotEmpty(dials.Retries);
        DateTimeOffset back = Assert.Single(dials.Connects);
        Assert.All(dials.Retries, retry => Assert.True(retry.Delay <= BackoffCap, $"a retry waited {retry.Delay}, past the cap {BackoffCap}"));
        Assert.All(dials.Retries, retry => Assert.True(retry.At < restarted || retry.Reason.Contains("refused", StringComparison.OrdinalIgnoreCase),
            $"a dial to the restarted server failed: {retry.Reason}"));
        ClientDials.Retry last = dials.Retries[^1];
        Assert.True(last.At < back, $"the last retry was logged at {last.At:O}, after the client was back at {back:O}");
        Assert.True(back - last.At < last.Delay + Redial, $"the client was back {back - last.At} after its last refusal, which chose to wait {last.Delay}");
    }

    /// <summary>
    /// A caller of a session whose client is away is answered at once, by the server's own measure of each request: the
    /// caller's clock would also count its connection to the restarted server and this test's turns on a loaded machine.
    /// </summary>
    private static void AssertAnsweredAtOnce(List<double> serverMilliseconds, int requests)
    {
        Assert.Equal(requests, serverMilliseconds.Count);
        Assert.All(serverMilliseconds, ms => Assert.True(ms < 1000, $"the server took {ms} ms to answer 404"));
    }

    /// <summary>How long the server says it took over each request to the session's ping since <paramref name="since"/>.</summary>
    private static List<double> ServerTimes(string session, DateTimeOffset since) =>
        CapturedLogs.EventsWhere("Path", $"/session/{session}/loadtest/ping")
            .FindAll(logEvent => logEvent.Timestamp >= since && CapturedLogs.Text(logEvent, "ElapsedMilliseconds") is not null)
            .ConvertAll(logEvent => double.Parse(CapturedLogs.Text(logEvent, "ElapsedMilliseconds")!, System.Globalization.CultureInfo.InvariantCulture));

    private static async Task<HttpStatusCode> PingAsync(HttpClient http, TunnelStack stack, string session)
    {
        using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));
        return response.StatusCode;
    }
}
