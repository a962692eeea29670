using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// Upgrades beyond the happy WebSocket: any protocol token, the backend ending its side, either far end vanishing, and
/// the client's own cap and idle timeout for upgraded streams. Each test starts its own stack.
/// </summary>
public sealed class UpgradeTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Any_upgrade_token_switches_bytes_flow_both_ways_and_the_backend_ending_its_side_closes_the_callers_connection()
    {
        const string session = "upgrade-shout";
        await using UpgradeBackend backend = await UpgradeBackend.StartAsync();
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await stack.StartClientAsync(session, backend.Url);
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(stack.PublicUrl.Host, stack.PublicUrl.Port, Token);

        await socket.SendAsync(Encoding.ASCII.GetBytes(
            $"GET /session/{session}/shout HTTP/1.1\r\nHost: caller.example\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\n"), Token);
        string head = await ReadHeadAsync(socket);
        await socket.SendAsync("hello, "u8.ToArray(), Token);
        await socket.SendAsync("tunnel."u8.ToArray(), Token);
        string rest = await ReadToEndAsync(socket).WaitAsync(TimeSpan.FromSeconds(10), Token);

        Assert.StartsWith("HTTP/1.1 101 ", head, StringComparison.Ordinal);
        Assert.Contains("\r\nUpgrade: shout", head, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("\r\nConnection: Upgrade", head, StringComparison.OrdinalIgnoreCase);
        Assert.Equal("HELLO, TUNNEL.BYE", rest);
        Assert.Equal("shout", backend.LastUpgradeHeaders!["Upgrade"]);
        Assert.Contains("Upgrade", backend.LastUpgradeHeaders!["Connection"].ToString(), StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task The_backend_vanishing_closes_the_callers_WebSocket_abnormally_instead_of_leaving_it_hanging()
    {
        const string session = "upgrade-backend-vanishes";
        await using UpgradeBackend backend = await UpgradeBackend.StartAsync();
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await stack.StartClientAsync(session, backend.Url);
        using ClientWebSocket socket = await WebSocketTests.ConnectAsync(stack.PublicUrl, session, "/vanishing-ws");
        await socket.SendAsync("still there?"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true, Token);
        (_, byte[] echoed) = await WebSocketTests.ReceiveMessageAsync(socket);
        Assert.Equal("still there?", Encoding.UTF8.GetString(echoed));

        await socket.SendAsync("vanish"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true, Token);

        await AssertClosedAbnormallyAsync(socket);
    }

    [Fact]
    public async Task The_tunnel_client_vanishing_closes_the_callers_WebSocket_abnormally_instead_of_leaving_it_hanging()
    {
        const string session = "upgrade-client-vanishes";
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using TunnelProcess client = ProcessClients.Start(stack, session, "client");
        await ProcessClients.WaitForNewUplinkAsync(stack, session, [], client);
        using ClientWebSocket socket = await WebSocketTests.ConnectAsync(stack.PublicUrl, session);
        await socket.SendAsync("ping"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true, Token);
        (_, byte[] echoed) = await WebSocketTests.ReceiveMessageAsync(socket);
        Assert.Equal("ping", Encoding.UTF8.GetString(echoed));

        client.Signal("KILL");

        await AssertClosedAbnormallyAsync(socket);
    }

    [Fact]
    public async Task Upgrades_beyond_the_clients_cap_get_503_while_ordinary_requests_still_pass()
    {
        const string session = "upgrade-cap";
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await stack.StartClientAsync(session, extraArgs: ["--max-upgraded-streams", "2"]);
        using ClientWebSocket first = await WebSocketTests.ConnectAsync(stack.PublicUrl, session);
        using ClientWebSocket second = await WebSocketTests.ConnectAsync(stack.PublicUrl, session);

        var refused = await Assert.ThrowsAsync<WebSocketException>(() => WebSocketTests.ConnectAsync(stack.PublicUrl, session));
        using HttpClient http = CallerHttp.Create();
        using HttpResponseMessage ping = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"), Token);

        Assert.Contains("503", refused.Message, StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, ping.StatusCode);
        await first.CloseAsync(WebSocketCloseStatus.NormalClosure, null, Token);

        // The place comes free once the client's relay has ended the closed stream, a moment after the close handshake.
        using ClientWebSocket? third = await Eventually.ValueAsync(
            async () =>
            {
                try
                {
                    return await WebSocketTests.ConnectAsync(stack.PublicUrl, session);
                }
                catch (WebSocketException ex) when (ex.Message.Contains("503", StringComparison.Ordinal))
                {
                    return null;
                }
            },
            socket => socket is not null,
            "a place under the cap comes free when one upgraded stream closes");
        Assert.Equal(WebSocketState.Open, third!.State);
    }

    [Fact]
    public async Task An_upgraded_stream_that_moves_no_byte_for_the_idle_timeout_is_closed_and_a_busy_one_is_not()
    {
        const string session = "upgrade-idle";
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await stack.StartClientAsync(session, extraArgs: ["--upgraded-idle-timeout", "00:00:01"]);
        using ClientWebSocket idle = await WebSocketTests.ConnectAsync(stack.PublicUrl, session);
        using ClientWebSocket busy = await WebSocketTests.ConnectAsync(stack.PublicUrl, session);
        using var stopBusy = new CancellationTokenSource();
        Task talking = Task.Run(async () =>
        {
            while (!stopBusy.IsCancellationRequested)
            {
                await busy.SendAsync("tick"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true, Token);
                await WebSocketTests.ReceiveMessageAsync(busy);
                await Task.Delay(200, Token); // a message every 200 ms keeps it well inside 1 s
            }
        }, Token);

        await AssertClosedAbnormallyAsync(idle);

        Assert.Equal(WebSocketState.Open, busy.State);
        await stopBusy.CancelAsync();
        await talking;
        await busy.CloseAsync(WebSocketCloseStatus.NormalClosure, null, Token);
    }

    [Fact]
    public async Task A_server_drain_cuts_an_open_WebSocket_at_its_deadline_and_counts_it_in_its_log_line()
    {
        const string session = "upgrade-drain";
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:DrainTimeout=00:00:01");
        await stack.StartClientAsync(session);
        using ClientWebSocket socket = await WebSocketTests.ConnectAsync(stack.PublicUrl, session);
        await socket.SendAsync("before"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true, Token);
        (_, byte[] echoed) = await WebSocketTests.ReceiveMessageAsync(socket);
        Assert.Equal("before", Encoding.UTF8.GetString(echoed));

        Task stopping = stack.StopServerAsync();

        await AssertClosedAbnormallyAsync(socket);
        await stopping.WaitAsync(TimeSpan.FromSeconds(30), Token);
        Assert.Contains(CapturedLogs.MessagesWhere("SourceContext", "Tunnel2.TunnelServer.GracefulShutdown"),
            message => message.Contains("(1 of them upgraded connections", StringComparison.Ordinal));
    }

    /// <summary>The caller's next receive ends with a broken connection within seconds: no close frame, and no hang.</summary>
    private static async Task AssertClosedAbnormallyAsync(ClientWebSocket socket)
    {
        var failure = await Assert.ThrowsAsync<WebSocketException>(async () =>
            await socket.ReceiveAsync(new byte[1024].AsMemory(), Token).AsTask().WaitAsync(TimeSpan.FromSeconds(15), Token));
        Assert.Equal(WebSocketError.ConnectionClosedPrematurely, failure.WebSocketErrorCode);
    }

    private static async Task<string> ReadHeadAsync(Socket socket)
    {
        var head = new StringBuilder();
        byte[] one = new byte[1];
        while (!head.ToString().EndsWith("\r\n\r\n", StringComparison.Ordinal))
        {
            int read = await socket.ReceiveAsync(one, Token).AsTask().WaitAsync(TimeSpan.FromSeconds(10), Token);
            Assert.True(read == 1, $"the connection ended inside the head: '{head}'");
            head.Append((char)one[0]);
        }

        return head.ToString();
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
