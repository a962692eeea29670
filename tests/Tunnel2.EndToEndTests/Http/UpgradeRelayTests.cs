using Microsoft.Extensions.DependencyInjection;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelClient.Relay;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// The client's two relays of an upgraded stream (<c>TunnelClient:Upgrades:Relay</c>): the event loop's and the tasks'
/// carry the same bytes in the same order (those the backend sent with its 101 head first), pass the backend's end on, end on
/// a reset from either side and give the upgrade's place back. Each test starts its own stack.
/// </summary>
public sealed class UpgradeRelayTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData("Loop")]
    [InlineData("Tasks")]
    public async Task Bytes_sent_with_the_101_head_come_first_then_both_ways_and_the_backends_end_reaches_the_caller(string relay)
    {
        string session = $"upgrade-relay-bytes-{relay}";
        await using RawUpgradeBackend backend = RawUpgradeBackend.Start();
        await using TunnelStack stack = await TunnelStack.StartAsync();
        TunnelClientHandle client = await stack.StartClientAsync(session, backend.Url, extraArgs: [$"--TunnelClient:Upgrades:Relay={relay}"]);
        using Socket caller = await UpgradeAsync(stack, session);

        string early = await ReadExactlyAsync(caller, RawUpgradeBackend.Early.Length);
        await caller.SendAsync("hello, "u8.ToArray(), Token);
        string first = await ReadExactlyAsync(caller, 7);
        await caller.SendAsync("tunnel."u8.ToArray(), Token);
        string second = await ReadExactlyAsync(caller, 7);
        string rest = await ReadToEndAsync(caller).WaitAsync(TimeSpan.FromSeconds(10), Token);

        Assert.Equal(RawUpgradeBackend.Early, early);
        Assert.Equal("HELLO, ", first);
        Assert.Equal("TUNNEL.", second);
        Assert.Equal("BYE", rest);
        await Eventually.WaitUntilAsync(() => Upgraded(client) == 0, "the upgraded stream's place is given back after a clean end");
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Tasks")]
    public async Task A_backend_reset_ends_the_upgraded_stream_and_gives_its_place_back(string relay)
    {
        string session = $"upgrade-relay-backend-reset-{relay}";
        await using RawUpgradeBackend backend = RawUpgradeBackend.Start();
        await using TunnelStack stack = await TunnelStack.StartAsync();
        TunnelClientHandle client = await stack.StartClientAsync(session, backend.Url,
            extraArgs: [$"--TunnelClient:Upgrades:Relay={relay}", "--max-upgraded-streams", "1"]);
        using Socket caller = await UpgradeAsync(stack, session);
        await ReadExactlyAsync(caller, RawUpgradeBackend.Early.Length);

        await caller.SendAsync("reset"u8.ToArray(), Token);

        await AssertEndsAsync(caller);
        await Eventually.WaitUntilAsync(() => Upgraded(client) == 0, "the place is given back after the backend's reset");
        using Socket next = await UpgradeAsync(stack, session); // under a cap of 1: only with the place back
        Assert.Equal(RawUpgradeBackend.Early, await ReadExactlyAsync(next, RawUpgradeBackend.Early.Length));
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Tasks")]
    public async Task A_caller_reset_cuts_the_backend_connection_and_gives_the_place_back(string relay)
    {
        string session = $"upgrade-relay-caller-reset-{relay}";
        await using RawUpgradeBackend backend = RawUpgradeBackend.Start();
        await using TunnelStack stack = await TunnelStack.StartAsync();
        TunnelClientHandle client = await stack.StartClientAsync(session, backend.Url,
            extraArgs: [$"--TunnelClient:Upgrades:Relay={relay}", "--max-upgraded-streams", "1"]);
        Socket caller = await UpgradeAsync(stack, session);
        await ReadExactlyAsync(caller, RawUpgradeBackend.Early.Length);

        caller.LingerState = new LingerOption(true, 0);
        caller.Dispose(); // a reset, not a FIN

        await Eventually.WaitUntilAsync(() => backend.Ended == 1, "the backend's connection is cut after the caller's reset");
        await Eventually.WaitUntilAsync(() => Upgraded(client) == 0, "the place is given back after the caller's reset");
    }

    [Fact]
    public async Task Two_hundred_WebSockets_echo_at_once_on_the_loop_relay_each_getting_its_own_messages()
    {
        const string session = "upgrade-relay-crowd";
        const int count = 200;
        await using TunnelStack stack = await TunnelStack.StartAsync();
        TunnelClientHandle client = await stack.StartClientAsync(session, extraArgs: ["--TunnelClient:Upgrades:Relay=Loop"]);
        ClientWebSocket[] sockets = await Task.WhenAll(Enumerable.Range(0, count).Select(_ => WebSocketTests.ConnectAsync(stack.PublicUrl, session)));
        try
        {
            int[] echoed = await Task.WhenAll(sockets.Select((socket, i) => EchoAsync(socket, i, messages: 10)));

            Assert.All(echoed, matched => Assert.Equal(10, matched));
            Assert.Equal(count, Upgraded(client));
        }
        finally
        {
            foreach (ClientWebSocket socket in sockets)
            {
                socket.Dispose();
            }
        }

        await Eventually.WaitUntilAsync(() => Upgraded(client) == 0, "every place is given back once the crowd has gone");
    }

    private static int Upgraded(TunnelClientHandle client) => client.Host.Services.GetRequiredService<BackendRelay>().UpgradedStreams;

    /// <returns>How many of the socket's messages came back as sent.</returns>
    private static async Task<int> EchoAsync(ClientWebSocket socket, int index, int messages)
    {
        int matched = 0;
        for (int i = 0; i < messages; i++)
        {
            byte[] text = Encoding.UTF8.GetBytes($"socket {index} message {i}");
            await socket.SendAsync(text, WebSocketMessageType.Text, endOfMessage: true, Token);
            (_, byte[] echoed) = await WebSocketTests.ReceiveMessageAsync(socket).WaitAsync(TimeSpan.FromSeconds(30), Token);
            matched += echoed.AsSpan().SequenceEqual(text) ? 1 : 0;
        }

        return matched;
    }

    private static async Task<Socket> UpgradeAsync(TunnelStack stack, string session)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(stack.PublicUrl.Host, stack.PublicUrl.Port, Token);
        await socket.SendAsync(Encoding.ASCII.GetBytes(
            $"GET /session/{session}/raw HTTP/1.1\r\nHost: caller.example\r\nConnection: Upgrade\r\nUpgrade: raw\r\n\r\n"), Token);
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

    /// <summary>The caller's connection ends (a FIN or a reset) within seconds.</summary>
    private static async Task AssertEndsAsync(Socket socket)
    {
        try
        {
            string rest = await ReadToEndAsync(socket).WaitAsync(TimeSpan.FromSeconds(15), Token);
            Assert.Equal(string.Empty, rest);
        }
        catch (SocketException)
        {
            // reset: ended too
        }
    }
}
