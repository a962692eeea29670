using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Draining;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// The server's two relays of an upgraded caller (<c>TunnelServer:Public:UpgradeRelay</c>): the tasks' over Kestrel's
/// upgraded stream, and the loop's, which takes the caller's connection over from Kestrel once the 101 has gone out.
/// Both carry the same bytes in the same order (the caller's sent with its request head first), close the caller as the
/// backend ends, cut the backend's connection when the caller vanishes, and give the upgrade's count back. Each test
/// starts its own stack.
/// </summary>
public sealed class ServerUpgradeRelayTests
{
    private const string OnLoop = "relayed on the server's loop";

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData("Loop")]
    [InlineData("Tasks")]
    public async Task A_WebSocket_echoes_text_and_1_MiB_messages_and_closes_with_the_callers_status(string relay)
    {
        string session = $"server-upgrade-ws-{relay}";
        await using TunnelStack stack = await StartAsync(relay);
        await stack.StartClientAsync(session);
        using ClientWebSocket socket = await WebSocketTests.ConnectAsync(stack.PublicUrl, session);

        await WebSocketEcho.TextAsync(socket, 50, i => $"message {i} ✓", Token);
        for (int i = 0; i < 3; i++)
        {
            byte[] binary = new byte[1024 * 1024];
            new Random(i).NextBytes(binary);
            await socket.SendAsync(binary, WebSocketMessageType.Binary, endOfMessage: true, Token);
            (WebSocketMessageType type, byte[] echoed) = await WebSocketTests.ReceiveMessageAsync(socket);
            Assert.Equal(WebSocketMessageType.Binary, type);
            Assert.Equal(binary, echoed);
        }

        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "done", Token).WaitAsync(TimeSpan.FromSeconds(10), Token);
        Assert.Equal(WebSocketCloseStatus.NormalClosure, socket.CloseStatus);
        await AssertUpgradesEndAsync(stack);
        Assert.Equal(relay == "Loop", RelayedOnLoop(session));
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Tasks")]
    public async Task Bytes_sent_with_the_request_head_go_up_first_and_the_backends_end_closes_the_caller(string relay)
    {
        string session = $"server-upgrade-early-{relay}";
        await using RawUpgradeBackend backend = RawUpgradeBackend.Start();
        await using TunnelStack stack = await StartAsync(relay);
        await stack.StartClientAsync(session, backend.Url);
        using Socket caller = await UpgradeAsync(stack, session, early: "hello, ");

        string answered = await ReadExactlyAsync(caller, RawUpgradeBackend.Early.Length + 7);
        await caller.SendAsync("tunnel."u8.ToArray(), Token); // the backend answers, then ends its side
        string rest = await ReadToEndAsync(caller).WaitAsync(TimeSpan.FromSeconds(15), Token);

        Assert.Equal(RawUpgradeBackend.Early + "HELLO, ", answered);
        Assert.Equal("TUNNEL.BYE", rest); // then the end of the caller's connection, though the caller never ended
        await AssertUpgradesEndAsync(stack);
        Assert.Equal(relay == "Loop", RelayedOnLoop(session));
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Tasks")]
    public async Task A_caller_that_vanishes_mid_stream_resets_the_backends_connection(string relay)
    {
        string session = $"server-upgrade-vanish-{relay}";
        await using RawUpgradeBackend backend = RawUpgradeBackend.Start();
        await using TunnelStack stack = await StartAsync(relay);
        await stack.StartClientAsync(session, backend.Url);
        Socket caller = await UpgradeAsync(stack, session);
        await ReadExactlyAsync(caller, RawUpgradeBackend.Early.Length);
        await caller.SendAsync("ping "u8.ToArray(), Token);
        Assert.Equal("PING ", await ReadExactlyAsync(caller, 5));

        caller.LingerState = new LingerOption(true, 0);
        caller.Dispose(); // a reset, not a FIN

        await Eventually.WaitUntilAsync(() => backend.Ended == 1, "the backend's connection is cut after the caller's reset");
        await AssertUpgradesEndAsync(stack);
    }

    /// <summary>
    /// A caller that ends its sending side (a half-close) after an upgrade: the loop's relay passes the FIN on and the
    /// backend's answer to it still reaches the caller, then the end. The task relay, on either listener, cannot: Kestrel
    /// takes an upgraded caller's FIN for the connection's close (ConnectionClosed, so RequestAborted) and aborts its
    /// output, with Kestrel's own sockets (the reference) as with the loop listener. Every way, both connections end.
    /// </summary>
    [Theory]
    [InlineData("Sockets", "Tasks")]
    [InlineData("Loop", "Tasks")]
    [InlineData("Loop", "Loop")]
    public async Task A_callers_half_close_ends_both_connections_and_the_loop_relay_still_passes_the_backends_last_words(string transport, string relay)
    {
        string session = $"server-upgrade-half-close-{transport}-{relay}";
        await using RawUpgradeBackend backend = RawUpgradeBackend.Start();
        await using TunnelStack stack = await StartAsync(relay, transport);
        await stack.StartClientAsync(session, backend.Url);
        using Socket caller = await UpgradeAsync(stack, session);
        await ReadExactlyAsync(caller, RawUpgradeBackend.Early.Length);
        await caller.SendAsync("ping "u8.ToArray(), Token);
        Assert.Equal("PING ", await ReadExactlyAsync(caller, 5));

        caller.Shutdown(SocketShutdown.Send); // a FIN: the caller is done sending, and listens on
        string rest = await ReadToEndAsync(caller).WaitAsync(TimeSpan.FromSeconds(15), Token);

        if (relay == "Loop")
        {
            Assert.Equal(RawUpgradeBackend.LastWords, rest);
        }
        else
        {
            // Lost as Kestrel aborts (always so far: the abort is at the FIN, the answer two hops later); never garbled.
            Assert.StartsWith(rest, RawUpgradeBackend.LastWords, StringComparison.Ordinal);
        }

        await Eventually.WaitUntilAsync(() => backend.Ended == 1, "the backend's connection ends after the caller's half-close");
        await AssertUpgradesEndAsync(stack);
        Assert.Equal(relay == "Loop", RelayedOnLoop(session));
    }

    private static Task<TunnelStack> StartAsync(string relay, string transport = "Loop") => TunnelStack.StartAsync(
        $"--TunnelServer:Public:Transport={transport}", $"--TunnelServer:Public:UpgradeRelay={relay}",
        "--Serilog:MinimumLevel:Override:Tunnel2.ProxyEntry.Upgrades=Debug");

    /// <summary>Whether the server logged the session's upgrade as handed to its loop (event 224).</summary>
    private static bool RelayedOnLoop(string session) =>
        CapturedLogs.MessagesWhere("Session", session).Exists(message => message.Contains(OnLoop, StringComparison.Ordinal));

    private static Task AssertUpgradesEndAsync(TunnelStack stack)
    {
        PublicDrain drain = stack.Server.Services.GetRequiredService<PublicDrain>();
        return Eventually.WaitUntilAsync(() => drain.Upgraded == 0 && drain.InFlight == 0, "the server's upgrade and its request end");
    }

    private static async Task<Socket> UpgradeAsync(TunnelStack stack, string session, string early = "")
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(stack.PublicUrl.Host, stack.PublicUrl.Port, Token);
        await socket.SendAsync(Encoding.ASCII.GetBytes(
            $"GET /session/{session}/raw HTTP/1.1\r\nHost: caller.example\r\nConnection: Upgrade\r\nUpgrade: raw\r\n\r\n{early}"), Token);
        var head = new StringBuilder();
        byte[] one = new byte[1];
        while (!head.ToString().EndsWith("\r\n\r\n", StringComparison.Ordinal))
        {
            int read = await socket.ReceiveAsync(one, Token).AsTask().WaitAsync(TimeSpan.FromSeconds(10), Token);
            Assert.True(read == 1, $"the connection ended inside the head: '{head}'");
            head.Append((char)one[0]);
        }

        Assert.StartsWith("HTTP/1.1 101 ", head.ToString(), StringComparison.Ordinal);
        return socket;
    }

    private static async Task<string> ReadExactlyAsync(Socket socket, int length)
    {
        byte[] buffer = new byte[length];
        int read = 0;
        while (read < length)
        {
            int n = await socket.ReceiveAsync(buffer.AsMemory(read), Token).AsTask().WaitAsync(TimeSpan.FromSeconds(10), Token);
            Assert.True(n > 0, $"the connection ended after {read} of {length} bytes");
            read += n;
        }

        return Encoding.ASCII.GetString(buffer);
    }

    private static async Task<string> ReadToEndAsync(Socket socket)
    {
        var text = new StringBuilder();
        byte[] buffer = new byte[1024];
        int read;
        while ((read = await socket.ReceiveAsync(buffer, Token)) > 0)
        {
            text.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        return text.ToString();
    }
}
