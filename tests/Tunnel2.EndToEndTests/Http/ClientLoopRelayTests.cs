using System.Net.WebSockets;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// The main HTTP paths with the client's backend connections on its event loop (<c>TunnelClient:Backends:Relay=Loop</c>,
/// issue 52 stage 4b): server, client and backend as processes. Each test also checks that the client said its backend
/// connections run on the loop, and that nothing on the loop failed.
/// </summary>
public sealed class ClientLoopRelayTests
{
    private const string Session = "client-loop-relay";

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task GETs_on_reused_connections_a_HEAD_and_a_large_download_answer_whole()
    {
        await using ProcessStack stack = await StartAsync();
        using HttpClient http = CallerHttp.Create();

        for (int i = 0; i < 50; i++)
        {
            Assert.Equal("pong", await http.GetStringAsync(stack.SessionUrl("/loadtest/ping"), Token));
        }

        using var head = new HttpRequestMessage(HttpMethod.Head, stack.SessionUrl("/loadtest/bytes/1000"));
        using HttpResponseMessage headAnswer = await http.SendAsync(head, Token);
        byte[] bytes = await http.GetByteArrayAsync(stack.SessionUrl("/loadtest/bytes/5000000"), Token);

        Assert.Equal(200, (int)headAnswer.StatusCode);
        Assert.Empty(await headAnswer.Content.ReadAsByteArrayAsync(Token));
        Assert.Equal(5_000_000, bytes.Length);
        AssertNoLoopFault(stack);
    }

    [Fact]
    public async Task A_POST_upload_with_a_length_and_a_chunked_one_come_back_unchanged()
    {
        await using ProcessStack stack = await StartAsync();
        using HttpClient http = CallerHttp.Create();
        byte[] body = new byte[3 * 1024 * 1024];
        Random.Shared.NextBytes(body);

        using HttpResponseMessage sized = await http.PostAsync(stack.SessionUrl("/loadtest/echo"), new ByteArrayContent(body), Token);
        Assert.Equal(body, await sized.Content.ReadAsByteArrayAsync(Token));

        using var chunkedContent = new StreamContent(new UnknownLengthStream(body)); // no length: sent chunked
        using HttpResponseMessage chunked = await http.PostAsync(stack.SessionUrl("/loadtest/echo"), chunkedContent, Token);
        Assert.Equal(body, await chunked.Content.ReadAsByteArrayAsync(Token));
        AssertNoLoopFault(stack);
    }

    [Fact]
    public async Task Many_callers_at_once_each_get_their_own_answer()
    {
        await using ProcessStack stack = await StartAsync();
        using HttpClient http = CallerHttp.Create();

        byte[][] answers = await Task.WhenAll(Enumerable.Range(0, 200).Select(i =>
            http.GetByteArrayAsync(stack.SessionUrl($"/loadtest/bytes/{1000 + i}"), Token)));

        Assert.Equal(Enumerable.Range(0, 200).Select(i => 1000 + i), answers.Select(answer => answer.Length));
        AssertNoLoopFault(stack);
    }

    [Fact]
    public async Task A_WebSocket_upgrade_keeps_the_runtimes_sockets_and_echoes_messages()
    {
        await using ProcessStack stack = await StartAsync();
        using var socket = new ClientWebSocket();
        var url = new UriBuilder(stack.SessionUrl("/loadtest/ws")) { Scheme = "ws" }.Uri;
        await socket.ConnectAsync(url, Token);

        await WebSocketEcho.TextAsync(socket, 10, i => $"message {i}", Token);
        await WebSocketEcho.CloseAsync(socket, Token);
        AssertNoLoopFault(stack);
    }

    private static async Task<ProcessStack> StartAsync()
    {
        ProcessStack stack = await ProcessStack.StartAsync(Session, new ProcessStackOptions { ClientArgs = ["--TunnelClient:Backends:Relay=Loop"] });
        await stack.Client.WaitForOutputAsync(new Regex("Backend connections run on the client's event loop", RegexOptions.None, TimeSpan.FromSeconds(1)));
        return stack;
    }

    private static void AssertNoLoopFault(ProcessStack stack)
    {
        Assert.DoesNotContain("BlockingCallOnLoop", stack.Client.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("A callback on the client's event loop failed", stack.Client.Output, StringComparison.Ordinal);
    }

    /// <summary>A body whose length HttpClient cannot know, so it sends it chunked.</summary>
    private sealed class UnknownLengthStream(byte[] data) : MemoryStream(data)
    {
        public override bool CanSeek => false;
    }
}
