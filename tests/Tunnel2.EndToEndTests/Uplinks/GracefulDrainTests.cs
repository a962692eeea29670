using System.Collections.Concurrent;
using System.IO.Pipelines;
using System.Net;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TestBackend;
using Tunnel2.TestBackend.Diagnostics;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>SIGTERM to real client and server processes: requests in flight finish, nothing new is lost, exit code 0.</summary>
[Collection(TunnelCollection.Name)]
public sealed class GracefulDrainTests(TunnelStackFixture fixture)
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(20);

    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task A_client_stopped_with_SIGTERM_finishes_the_request_in_flight_and_new_requests_go_to_the_other_client()
    {
        string session = NewSession();
        await using TunnelProcess leaving = ProcessClients.Start(Stack, session, "client A");
        Uplink leavingUplink = await ProcessClients.WaitForNewUplinkAsync(Stack, session, [], leaving);
        // The request in flight is an upload whose end the test holds back: it lasts exactly as long as the steps below,
        // however slowly a loaded or cold machine runs them (a fixed 2 s, then 8 s, delay ended first in clean roots).
        var body = new Pipe();
        using var content = new StreamContent(body.Reader.AsStream());
        Task<HttpResponseMessage> inFlight = fixture.Http.PostAsync(Stack.SessionUrl(session, "/loadtest/echo"), content);
        // More than the HTTP client buffers before it sends, so the head and the body's start leave at once.
        byte[] start = new byte[64 * 1024];
        await body.Writer.WriteAsync(start);
        await Eventually.WaitUntilAsync(() => leavingUplink.ActiveStreamCount == 1, "the upload is in flight through client A");
        await using TunnelClientHandle staying = await Stack.StartClientAsync(session);
        Assert.False(inFlight.IsCompleted);

        leaving.Terminate();

        await Eventually.WaitUntilAsync(() => !leavingUplink.AcceptsNewStreams, "the server heard client A's GoAway");
        Assert.True(leavingUplink.IsOpen); // still carrying the request in flight
        long relayedBefore = staying.Status.RequestsRelayed;
        for (int i = 0; i < 5; i++)
        {
            using HttpResponseMessage ping = await fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        }

        Assert.Equal(relayedBefore + 5, staying.Status.RequestsRelayed);
        Assert.False(inFlight.IsCompleted);
        await body.Writer.WriteAsync("then let go"u8.ToArray());
        await body.Writer.CompleteAsync();
        using (HttpResponseMessage response = await inFlight)
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            byte[] echoed = await response.Content.ReadAsByteArrayAsync();
            Assert.Equal(start.Length + "then let go".Length, echoed.Length);
            Assert.EndsWith("then let go", Encoding.ASCII.GetString(echoed), StringComparison.Ordinal);
        }

        Assert.Equal(0, await leaving.WaitForExitAsync(ExitTimeout));
        Assert.Contains("Stopping: letting the", leaving.Output, StringComparison.Ordinal);
        Assert.Contains("Drained: every request in flight finished", leaving.Output, StringComparison.Ordinal);
        await Eventually.WaitUntilAsync(() => !Stack.Registry.GetUplinks(session).Contains(leavingUplink), "the server dropped client A's uplink");
        Assert.Equal("peer closed the connection", leavingUplink.CloseReason);
    }

    [Fact]
    public async Task Rolling_restart_of_two_client_processes_under_load_loses_no_request()
    {
        string session = NewSession();
        TunnelProcess a = ProcessClients.Start(Stack, session, "client A");
        TunnelProcess? b = null;
        try
        {
            await ProcessClients.WaitForNewUplinkAsync(Stack, session, [], a);
            b = ProcessClients.Start(Stack, session, "client B");
            await ProcessClients.WaitForNewUplinkAsync(Stack, session, Stack.Registry.GetUplinks(session).Take(1).ToList(), b);

            using var stop = new CancellationTokenSource();
            var failures = new ConcurrentQueue<string>();
            int succeeded = 0;
            Uri url = Stack.SessionUrl(session, "/loadtest/ping");
            Task[] loops = Enumerable.Range(0, 8).Select(_ => Task.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    try
                    {
                        using HttpResponseMessage response = await fixture.Http.GetAsync(url);
                        if (response.StatusCode == HttpStatusCode.OK)
                        {
                            Interlocked.Increment(ref succeeded);
                        }
                        else
                        {
                            failures.Enqueue($"{(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
                        }
                    }
                    catch (HttpRequestException ex)
                    {
                        failures.Enqueue(ex.Message);
                    }
                }
            })).ToArray();

            await Eventually.WaitUntilAsync(() => Volatile.Read(ref succeeded) > 100, "the load is flowing");
            a = await RestartAsync(a, session, "client A (restarted)");
            b = await RestartAsync(b, session, "client B (restarted)");
            int afterRestarts = Volatile.Read(ref succeeded);
            await Eventually.WaitUntilAsync(() => Volatile.Read(ref succeeded) > afterRestarts + 100, "the load flows through the restarted clients");
            await stop.CancelAsync();
            await Task.WhenAll(loops);

            Assert.Empty(failures);
            Assert.Equal(2, Stack.Registry.GetUplinks(session).Count);
        }
        finally
        {
            await a.DisposeAsync();
            if (b is not null)
            {
                await b.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task A_server_stopped_with_SIGTERM_finishes_the_request_in_flight_refuses_new_ones_and_exits_0()
    {
        WebApplication backend = TestBackendApp.Create(["--urls", "http://127.0.0.1:0", "--Serilog:MinimumLevel:Default=Warning"]);
        await backend.StartAsync();
        try
        {
            var backendUrl = new Uri(backend.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
            await using TunnelProcess server = TunnelProcess.StartServer("server",
                "--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token, "--drain-timeout", "00:00:10");
            (Uri publicUrl, Uri tunnelUrl) = await server.WaitForServerUrlsAsync();
            string session = NewSession();
            await using var client = new TunnelClientHandle(TunnelClient.TunnelClientApp.Create([
                "--server", tunnelUrl.ToString().TrimEnd('/'), "--session", session, "--token", TunnelStack.Token,
                "--backend", backendUrl.ToString().TrimEnd('/'), "--Serilog:MinimumLevel:Default=Warning",
            ]));
            await client.StartAsync();
            using var http = new HttpClient();
            var delay = new Uri(publicUrl, $"/session/{session}/loadtest/delay/2000");
            await Eventually.WaitUntilAsync(async () =>
            {
                using HttpResponseMessage ping = await http.GetAsync(new Uri(publicUrl, $"/session/{session}/loadtest/ping"));
                return ping.StatusCode == HttpStatusCode.OK;
            }, "the tunnel through the server process works");
            DelayStatistics waits = backend.Services.GetRequiredService<DelayStatistics>();
            Task<HttpResponseMessage> inFlight = http.GetAsync(delay);
            await Eventually.WaitUntilAsync(() => waits.ActiveWaits == 1, "the delay request reached the backend");

            server.Terminate();

            await server.WaitForOutputAsync(new System.Text.RegularExpressions.Regex("Draining: no new uplinks or public requests"));
            using (HttpResponseMessage refused = await http.GetAsync(new Uri(publicUrl, $"/session/{session}/loadtest/ping")))
            {
                Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
                Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
                Assert.NotNull(refused.Headers.RetryAfter);
                Assert.False(inFlight.IsCompleted);
            }

            using (HttpResponseMessage response = await inFlight)
            {
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            }

            Assert.Equal(0, await server.WaitForExitAsync(ExitTimeout));
            Assert.Contains("Drained: every public request and TCP connection finished", server.Output, StringComparison.Ordinal);
            Assert.Equal(1, waits.CompletedWaits);
        }
        finally
        {
            await backend.StopAsync();
            await backend.DisposeAsync();
        }
    }

    private async Task<TunnelProcess> RestartAsync(TunnelProcess running, string session, string name)
    {
        IReadOnlyList<Uplink> before = Stack.Registry.GetUplinks(session);
        running.Terminate();
        Assert.Equal(0, await running.WaitForExitAsync(ExitTimeout));
        await running.DisposeAsync();
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 1, $"the server dropped the uplink of the client before {name}");

        TunnelProcess restarted = ProcessClients.Start(Stack, session, name);
        await ProcessClients.WaitForNewUplinkAsync(Stack, session, before, restarted);
        return restarted;
    }

    private static string NewSession() => Guid.NewGuid().ToString("N");
}
