using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// A request takes a backend slot once its body is here (or the first stream window of it), so uploads that trickle
/// in hold none; with request buffering off, a body that is streamed in step with the answer still goes through.
/// </summary>
public sealed class RequestBufferingTests
{
    private const int Tricklers = 12;

    [Fact]
    public async Task A_crowd_of_uploads_trickling_in_holds_no_slot_so_GETs_beside_them_answer_while_they_still_trickle()
    {
        const string session = "trickle-crowd";
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using TunnelClientHandle client = await stack.StartClientAsync(session, maxConcurrency: 2);
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        Uplink uplink = stack.Registry.GetUplinks(session).Single();

        // Each sends its head and then one body byte every 100 ms: far below the body's 1,000 bytes for the whole test.
        Task[] tricklers = [.. Enumerable.Range(0, Tricklers).Select(_ => TrickleAsync(stack.PublicUrl, session, stop.Token))];
        await Eventually.WaitUntilAsync(() => uplink.ActiveStreamCount == Tricklers, $"all {Tricklers} uploads are open streams on the uplink");

        using HttpClient http = CallerHttp.Create();
        for (int i = 0; i < 5; i++)
        {
            using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"), stop.Token);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        // The GETs were answered while every upload still trickled: none of them had a slot to give up.
        Assert.All(tricklers, trickler => Assert.False(trickler.IsCompleted, $"an upload ended early: {trickler.Exception?.GetBaseException().Message}"));
        // A ping's stream leaves the table just after its last bytes reach the caller, so its count may lag an instant.
        await Eventually.WaitUntilAsync(() => uplink.ActiveStreamCount == Tricklers, $"only the {Tricklers} uploads are open streams");
        Assert.All(tricklers, trickler => Assert.False(trickler.IsCompleted, "an upload ended early"));
        Assert.Equal(0, client.QueuedRequests);
        await stop.CancelAsync();
        await Task.WhenAll(tricklers);
    }

    [Fact]
    public async Task A_body_larger_than_the_stream_window_and_sent_slowly_reaches_the_backend_as_it_comes()
    {
        const string session = "trickle-large";
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using TunnelClientHandle client = await stack.StartClientAsync(session, maxConcurrency: 1);
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(60));

        // 63,000 bytes in pieces of 7,000: the first 16 KiB start the request, and the answer comes while the rest waits.
        // (Pieces that are not a multiple of 4 KiB: TestBackend's echo, reading a partial Content-Length body whose
        // bytes so far are a multiple of 4,096, answers only once more arrives; seen with plain sockets, without the tunnel.)
        const int pieces = 9;
        byte[] piece = new byte[7000];
        Array.Fill(piece, (byte)'x');
        using Socket socket = await StartEchoPostAsync(stack.PublicUrl, session, $"Content-Length: {pieces * piece.Length}\r\nConnection: close", stop.Token);
        for (int i = 0; i < 3; i++)
        {
            await socket.SendAsync(piece, SocketFlags.None, stop.Token);
        }

        // 21,000 bytes sent, 42,000 still to come: the answer's head arrives anyway.
        string head = await ReadHeadAsync(socket, stop.Token);
        Assert.StartsWith("HTTP/1.1 200", head, StringComparison.Ordinal);
        for (int i = 3; i < pieces; i++)
        {
            await socket.SendAsync(piece, SocketFlags.None, stop.Token);
        }
    }

    [Fact]
    public async Task With_request_buffering_off_a_body_sent_in_step_with_the_answer_reaches_the_backend_at_once()
    {
        const string session = "duplex";
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using TunnelClientHandle client = await stack.StartClientAsync(session, extraArgs: ["--request-buffering", "false"]);
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(30));

        // A chunked upload that sends one line, waits for its echo, then sends the next: it stalls if the client
        // waited for the body (or 16 KiB of it) before calling the backend.
        using Socket socket = await StartEchoPostAsync(stack.PublicUrl, session, "Transfer-Encoding: chunked\r\nConnection: close", stop.Token);
        await socket.SendAsync(Encoding.ASCII.GetBytes("6\r\nping-1\r\n"), SocketFlags.None, stop.Token);
        string received = await ReadUntilAsync(socket, "ping-1", stop.Token);
        Assert.StartsWith("HTTP/1.1 200", received, StringComparison.Ordinal);

        await socket.SendAsync(Encoding.ASCII.GetBytes("6\r\nping-2\r\n0\r\n\r\n"), SocketFlags.None, stop.Token);
        await ReadUntilAsync(socket, "ping-2", stop.Token);
    }

    [Fact]
    public async Task An_upload_below_the_minimum_data_rate_gets_408_problem_details_not_a_bad_gateway()
    {
        const string session = "too-slow";
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using TunnelClientHandle client = await stack.StartClientAsync(session);
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        using Socket socket = await StartEchoPostAsync(stack.PublicUrl, session, "Content-Length: 1000", stop.Token);

        // 10 bytes/s, far below Kestrel's 240 bytes/s: after its 5 s grace the server gives up on the body.
        Task<string> answer = ReadUntilAsync(socket, "}", stop.Token);
        using var tick = new PeriodicTimer(TimeSpan.FromMilliseconds(100));
        while (!answer.IsCompleted && await tick.WaitForNextTickAsync(stop.Token))
        {
            try
            {
                await socket.SendAsync("x"u8.ToArray(), SocketFlags.None, stop.Token);
            }
            catch (SocketException)
            {
                break; // closed after the answer
            }
        }

        string received = await answer;
        Assert.StartsWith("HTTP/1.1 408", received, StringComparison.Ordinal);
        Assert.Contains("application/problem+json", received, StringComparison.Ordinal);
        Assert.Contains("urn:tunnel2:problem:request-body-too-slow", received, StringComparison.Ordinal);
    }

    private static async Task TrickleAsync(Uri server, string session, CancellationToken stop)
    {
        using Socket socket = await StartEchoPostAsync(server, session, "Content-Length: 1000\r\nConnection: close", stop);
        using var tick = new PeriodicTimer(TimeSpan.FromMilliseconds(100));
        try
        {
            while (await tick.WaitForNextTickAsync(stop))
            {
                await socket.SendAsync("x"u8.ToArray(), SocketFlags.None, stop);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // the test is done with this caller
        }
    }

    /// <summary>Connects to the public port and sends the head of a POST to the session's echo endpoint; the body is the caller's.</summary>
    private static async Task<Socket> StartEchoPostAsync(Uri server, string session, string framing, CancellationToken cancellationToken)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        try
        {
            await socket.ConnectAsync(server.Host, server.Port, cancellationToken);
            await socket.SendAsync(Encoding.ASCII.GetBytes(
                $"POST /session/{session}/loadtest/echo HTTP/1.1\r\nHost: t\r\n{framing}\r\n\r\n"), SocketFlags.None, cancellationToken);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static Task<string> ReadHeadAsync(Socket socket, CancellationToken cancellationToken) =>
        ReadUntilAsync(socket, "\r\n\r\n", cancellationToken);

    private static async Task<string> ReadUntilAsync(Socket socket, string marker, CancellationToken cancellationToken)
    {
        var received = new StringBuilder();
        byte[] buffer = new byte[4096];
        while (!received.ToString().Contains(marker, StringComparison.Ordinal))
        {
            int read = await socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
            Assert.True(read > 0, $"the connection closed before '{marker.ReplaceLineEndings("\\r\\n")}' arrived; got '{received}'");
            received.Append(Encoding.Latin1.GetString(buffer, 0, read));
        }

        return received.ToString();
    }
}
