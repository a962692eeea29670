using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
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

    /// <summary>The upload's first part: more than one read of the backend, so its echo starts before the rest is sent.</summary>
    private const int UploadStart = 64 * 1024;

    private TunnelStack Stack => fixture.Stack;

    [Fact]
    public async Task A_client_stopped_with_SIGTERM_finishes_the_request_in_flight_and_new_requests_go_to_the_other_client()
    {
        string session = NewSession();
        await using TunnelProcess leaving = ProcessClients.Start(Stack, session, "client A");
        Uplink leavingUplink = await ProcessClients.WaitForNewUplinkAsync(Stack, session, [], leaving);
        // The request in flight is an upload whose end the test holds back: it lasts exactly as long as the steps below,
        // however slowly a loaded or cold machine runs them (a fixed 2 s, then 8 s, delay ended first in clean roots).
        // Sent raw and chunked: HttpClient shows no response head over HTTP/1.1 before the request body is sent, and the
        // test backend's echo (Kestrel) does not answer a Content-Length body whose first read is a multiple of 4 KiB.
        Uri url = Stack.SessionUrl(session, "/loadtest/echo");
        using var caller = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await caller.ConnectAsync(url.Host, url.Port);
        await caller.SendAsync(Encoding.ASCII.GetBytes(
            $"POST {url.PathAndQuery} HTTP/1.1\r\nHost: {url.Authority}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{UploadStart:x}\r\n"));
        await caller.SendAsync(new byte[UploadStart]);
        await caller.SendAsync("\r\n"u8.ToArray());
        // The backend echoes as it reads, so the answer's head proves the upload went through client A to the backend
        // (the server's stream count alone does not: under load client A may not have read the request yet, and a
        // request it reads after the SIGTERM is refused as it drains).
        var answer = new MemoryStream();
        string head = await ReadHeadAsync(caller, answer).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.StartsWith("HTTP/1.1 200", head, StringComparison.Ordinal);
        Assert.Equal(1, leavingUplink.ActiveStreamCount);
        await using TunnelClientHandle staying = await Stack.StartClientAsync(session);

        leaving.Terminate();

        await Eventually.WaitUntilAsync(() => !leavingUplink.AcceptsNewStreams, "the server heard client A's GoAway");
        // Still carrying the request in flight.
        Assert.True(leavingUplink.IsOpen, $"Client A's uplink closed ({leavingUplink.CloseReason}) with the upload in flight:\n{leaving.Output}");
        long relayedBefore = staying.Status.RequestsRelayed;
        for (int i = 0; i < 5; i++)
        {
            using HttpResponseMessage ping = await fixture.Http.GetAsync(Stack.SessionUrl(session, "/loadtest/ping"));
            Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        }

        Assert.Equal(relayedBefore + 5, staying.Status.RequestsRelayed);
        Assert.Equal(1, leavingUplink.ActiveStreamCount);
        await caller.SendAsync("b\r\nthen let go\r\n0\r\n\r\n"u8.ToArray());
        await ReadToEndAsync(caller, answer).WaitAsync(TimeSpan.FromSeconds(30));
        string echoed = Unchunk(Encoding.ASCII.GetString(answer.ToArray())[head.Length..]);
        Assert.Equal(UploadStart + "then let go".Length, echoed.Length);
        Assert.EndsWith("then let go", echoed, StringComparison.Ordinal);

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
            var stopped = new List<string>();
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
            a = await RestartAsync(a, session, "client A (restarted)", stopped);
            b = await RestartAsync(b, session, "client B (restarted)", stopped);
            int afterRestarts = Volatile.Read(ref succeeded);
            await Eventually.WaitUntilAsync(() => Volatile.Read(ref succeeded) > afterRestarts + 100, "the load flows through the restarted clients");
            await stop.CancelAsync();
            await Task.WhenAll(loops);

            // The stopped clients' own words go with a failure: which drain step a lost request met.
            Assert.True(failures.IsEmpty, $"{string.Join("\n", failures)}\n{string.Join("\n", stopped)}");
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

    private async Task<TunnelProcess> RestartAsync(TunnelProcess running, string session, string name, List<string> stopped)
    {
        IReadOnlyList<Uplink> before = Stack.Registry.GetUplinks(session);
        running.Terminate();
        Assert.Equal(0, await running.WaitForExitAsync(ExitTimeout));
        stopped.Add($"{running.Name} said:\n{running.Output}");
        await running.DisposeAsync();
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 1, $"the server dropped the uplink of the client before {name}");

        TunnelProcess restarted = ProcessClients.Start(Stack, session, name);
        await ProcessClients.WaitForNewUplinkAsync(Stack, session, before, restarted);
        return restarted;
    }

    /// <summary>Reads into <paramref name="answer"/> until it holds a whole response head, and returns the head with its blank line.</summary>
    private static async Task<string> ReadHeadAsync(Socket caller, MemoryStream answer)
    {
        byte[] buffer = new byte[16 * 1024];
        while (true)
        {
            int read = await caller.ReceiveAsync(buffer);
            Assert.True(read > 0, $"The server closed before a response head: '{Encoding.ASCII.GetString(answer.ToArray())}'");
            answer.Write(buffer, 0, read);
            string text = Encoding.ASCII.GetString(answer.ToArray());
            int end = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
            if (end >= 0)
            {
                return text[..(end + 4)];
            }
        }
    }

    /// <summary>The payload of a whole chunked body (sizes in hex, no extensions or trailers: the test backend's framing).</summary>
    private static string Unchunk(string chunked)
    {
        var payload = new StringBuilder();
        int at = 0;
        while (true)
        {
            int lineEnd = chunked.IndexOf("\r\n", at, StringComparison.Ordinal);
            int size = Convert.ToInt32(chunked[at..lineEnd], 16);
            if (size == 0)
            {
                return payload.ToString();
            }

            payload.Append(chunked, lineEnd + 2, size);
            at = lineEnd + 2 + size + 2;
        }
    }

    private static async Task ReadToEndAsync(Socket caller, MemoryStream answer)
    {
        byte[] buffer = new byte[16 * 1024];
        int read;
        while ((read = await caller.ReceiveAsync(buffer)) > 0)
        {
            answer.Write(buffer, 0, read);
        }
    }

    private static string NewSession() => Guid.NewGuid().ToString("N");
}
