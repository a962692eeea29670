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

    [Fact]
    public async Task Across_a_server_restart_callers_fail_fast_get_404_in_the_gap_and_clients_return_within_the_backoff_cap()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        using var relay = new TcpRelay(new IPEndPoint(IPAddress.Loopback, stack.TunnelUrl.Port));
        string direct = "restart-direct";
        string held = "restart-held";
        TunnelClientHandle directClient = await stack.StartClientAsync(direct);
        TunnelClientHandle heldClient = await stack.StartClientAsync(held, extraArgs: [$"--TunnelClient:Server={relay.Url.GetLeftPart(UriPartial.Authority)}"]);
        using HttpClient http = CallerHttp.Create();
        Assert.Equal(HttpStatusCode.OK, await PingAsync(http, stack, direct));
        Assert.Equal(HttpStatusCode.OK, await PingAsync(http, stack, held));
        relay.HoldNewConnections(); // the relayed client's redials wait at the relay: a server that is up but not yet rejoined

        await stack.StopServerAsync();
        await Eventually.WaitUntilAsync(() => !directClient.Status.IsConnected && !heldClient.Status.IsConnected, "both clients lose their uplink");
        var down = Stopwatch.StartNew();
        await Assert.ThrowsAsync<HttpRequestException>(() => http.GetAsync(stack.SessionUrl(direct, "/loadtest/ping")));
        Assert.True(down.Elapsed < TimeSpan.FromSeconds(2), $"a caller waited {down.Elapsed} on a stopped server");

        await stack.StartServerAgainAsync();
        var up = Stopwatch.StartNew();
        for (int i = 0; i < 3; i++)
        {
            var clock = Stopwatch.StartNew();
            Assert.Equal(HttpStatusCode.NotFound, await PingAsync(http, stack, held));
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(1), $"the 404 took {clock.Elapsed}");
        }

        // The direct client was retrying all along: it is back within one backoff interval (plus a handshake).
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(direct).Count == 1, "the direct client returns", TimeSpan.FromSeconds(5));
        Assert.True(up.Elapsed < BackoffCap + TimeSpan.FromSeconds(1), $"the direct client returned {up.Elapsed} after the server");
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

    private static async Task<HttpStatusCode> PingAsync(HttpClient http, TunnelStack stack, string session)
    {
        using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));
        return response.StatusCode;
    }
}
