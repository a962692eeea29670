using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// The main HTTP paths on both transports of the public listener (<c>TunnelServer:Public:Transport</c>, issue 52 stage
/// 4a): <c>Loop</c>, the server's event loop and the default, and <c>Sockets</c>, Kestrel's socket transport, which stays
/// selectable (and is what runs where there is no loop), so both stay tested. Server, client and backend run as
/// processes, the public requests over real sockets. Each test also checks which transport the server said it uses,
/// and that nothing on the loop failed.
/// </summary>
public sealed class PublicTransportTests
{
    private const string Session = "public-transport";

    private const string OnLoopLine = "runs on the server's event loop";

    /// <summary>The loop with the storm's opt-in settings (issue 52 item 4): connection starts on the loop, a read budget per turn.</summary>
    private const string LoopFair = "LoopFair";

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task The_loop_is_the_default_transport()
    {
        await using ProcessStack stack = await ProcessStack.StartAsync(Session);
        await WaitForLoopLineAsync(stack);

        using HttpClient http = CallerHttp.Create();
        Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl("/loadtest/ping"), Token));
        AssertNoLoopFault(stack);
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData(LoopFair)]
    [InlineData("Sockets")]
    public async Task A_GET_and_a_large_download_answer_whole(string transport)
    {
        await using ProcessStack stack = await StartAsync(transport);
        using HttpClient http = CallerHttp.Create();

        Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl("/loadtest/ping"), Token));
        byte[] bytes = await http.GetByteArrayAsync(stack.SessionUrl("/loadtest/bytes/5000000"), Token);

        Assert.Equal(5_000_000, bytes.Length);
        AssertNoLoopFault(stack, transport);
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData(LoopFair)]
    [InlineData("Sockets")]
    public async Task A_POST_upload_with_a_length_and_a_chunked_one_come_back_unchanged(string transport)
    {
        await using ProcessStack stack = await StartAsync(transport);
        using HttpClient http = CallerHttp.Create();
        byte[] body = new byte[3 * 1024 * 1024];
        Random.Shared.NextBytes(body);

        using HttpResponseMessage sized = await http.PostAsync(stack.SessionUrl("/loadtest/echo"), new ByteArrayContent(body), Token);
        Assert.Equal(body, await sized.Content.ReadAsByteArrayAsync(Token));

        using var chunkedContent = new StreamContent(new UnknownLengthStream(body)); // no length: sent chunked
        using HttpResponseMessage chunked = await http.PostAsync(stack.SessionUrl("/loadtest/echo"), chunkedContent, Token);
        Assert.Equal(body, await chunked.Content.ReadAsByteArrayAsync(Token));
        AssertNoLoopFault(stack, transport);
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_WebSocket_upgrade_echoes_messages(string transport)
    {
        await using ProcessStack stack = await StartAsync(transport);
        using var socket = new ClientWebSocket();
        var url = new UriBuilder(stack.SessionUrl("/loadtest/ws")) { Scheme = "ws" }.Uri;
        await socket.ConnectAsync(url, Token);

        await WebSocketEcho.TextAsync(socket, 20, i => $"message {i}", Token);
        await WebSocketEcho.CloseAsync(socket, Token);
        AssertNoLoopFault(stack, transport);
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData(LoopFair)]
    [InlineData("Sockets")]
    public async Task A_caller_that_vanishes_mid_upload_leaves_the_listener_serving_the_next_callers(string transport)
    {
        await using ProcessStack stack = await StartAsync(transport);
        using (var caller = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            await caller.ConnectAsync(IPAddress.Loopback, stack.PublicUrl.Port, Token);
            await caller.SendAsync(Encoding.ASCII.GetBytes(
                $"POST /session/{Session}/loadtest/echo HTTP/1.1\r\nHost: loop\r\nContent-Length: {64 << 20}\r\n\r\n"), SocketFlags.None, Token);
            await caller.SendAsync(new byte[256 * 1024], SocketFlags.None, Token);
            caller.LingerState = new LingerOption(true, 0);
        } // a reset, mid-body

        using HttpClient http = CallerHttp.Create();
        for (int i = 0; i < 20; i++)
        {
            Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl("/loadtest/ping"), Token));
        }

        Assert.False(stack.Server.HasExited);
        AssertNoLoopFault(stack, transport);
    }

    [Fact]
    public async Task Visitor_address_rules_see_the_callers_address_from_the_loop()
    {
        await using ProcessStack stack = await ProcessStack.StartAsync(Session, new ProcessStackOptions
        {
            ServerArgs = ["--TunnelServer:Public:Transport=Loop", "--TunnelServer:ClientVisitorPolicies=true"],
            ClientArgs = ["--cidr-deny", "127.0.0.2/32"],
        });
        await WaitForLoopLineAsync(stack);

        Assert.StartsWith("HTTP/1.1 200", await GetFromAsync(IPAddress.Loopback, stack), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 403", await GetFromAsync(IPAddress.Parse("127.0.0.2"), stack), StringComparison.Ordinal);
        AssertNoLoopFault(stack);
    }

    /// <summary>One GET from a socket bound to <paramref name="source"/> (all of 127.0.0.0/8 is loopback); the answer's head.</summary>
    private static async Task<string> GetFromAsync(IPAddress source, ProcessStack stack)
    {
        using var caller = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        caller.Bind(new IPEndPoint(source, 0));
        await caller.ConnectAsync(IPAddress.Loopback, stack.PublicUrl.Port, Token);
        await caller.SendAsync(Encoding.ASCII.GetBytes(
            $"GET /session/{Session}/loadtest/ping HTTP/1.1\r\nHost: loop\r\nConnection: close\r\n\r\n"), SocketFlags.None, Token);
        using var answer = new MemoryStream();
        byte[] buffer = new byte[4096];
        int n;
        while ((n = await caller.ReceiveAsync(buffer, SocketFlags.None, Token)) > 0)
        {
            answer.Write(buffer, 0, n);
        }

        return Encoding.ASCII.GetString(answer.ToArray());
    }

    private static async Task<ProcessStack> StartAsync(string transport)
    {
        ProcessStack stack = transport == LoopFair
            ? await ProcessStack.StartAsync(Session, "--TunnelServer:Public:Transport=Loop", "--TunnelServer:Public:StartOnLoop=true",
                "--TunnelServer:Public:LoopReadBudget=65536")
            : await ProcessStack.StartAsync(Session, $"--TunnelServer:Public:Transport={transport}");
        if (transport != "Sockets")
        {
            await WaitForLoopLineAsync(stack);
        }

        return stack;
    }

    private static Task WaitForLoopLineAsync(ProcessStack stack) =>
        stack.Server.WaitForOutputAsync(new Regex(OnLoopLine, RegexOptions.None, TimeSpan.FromSeconds(1)));

    /// <summary>
    /// Nothing on the loop failed, and the server named the loop only when it was chosen (its line comes with the
    /// listening line, long before a test's requests are answered).
    /// </summary>
    private static void AssertNoLoopFault(ProcessStack stack, string transport = "Loop")
    {
        Assert.Equal(transport != "Sockets", stack.Server.Output.Contains(OnLoopLine, StringComparison.Ordinal));
        Assert.DoesNotContain("BlockingCallOnLoop", stack.Server.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("The server's event loop: a callback failed", stack.Server.Output, StringComparison.Ordinal);
    }

    /// <summary>A body whose length HttpClient cannot know, so it sends it chunked.</summary>
    private sealed class UnknownLengthStream(byte[] data) : MemoryStream(data)
    {
        public override bool CanSeek => false;
    }
}
