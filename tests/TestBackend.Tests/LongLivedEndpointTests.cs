using System.Net;
using System.Net.WebSockets;
using System.Text;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

/// <summary>HEAD on the GET routes, the WebSocket echo and the event stream: the long-lived shapes real apps have.</summary>
public sealed class LongLivedEndpointTests(BackendFixture fixture)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData("loadtest/ping")]
    [InlineData("loadtest/fast")]
    [InlineData("loadtest/get")]
    [InlineData("loadtest/bytes/100000")]
    [InlineData("loadtest/bytes/17179869184")]
    [InlineData("loadtest/status/418")]
    [InlineData("loadtest/delay/1")]
    [InlineData("loadtest/info")]
    [InlineData("healthz")]
    public async Task HEAD_answers_with_the_status_and_length_a_GET_gets_and_no_body(string path)
    {
        using var head = await fixture.Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, path), HttpCompletionOption.ResponseHeadersRead, Token);
        using var get = await fixture.Client.GetAsync(path, HttpCompletionOption.ResponseHeadersRead, Token);

        Assert.Equal(get.StatusCode, head.StatusCode);
        Assert.Equal(get.Content.Headers.ContentType, head.Content.Headers.ContentType);
        if (path != "loadtest/get") // its body describes the request, method included
        {
            Assert.Equal(get.Content.Headers.ContentLength, head.Content.Headers.ContentLength);
        }

        await using Stream body = await head.Content.ReadAsStreamAsync(Token);
        Assert.Equal(0, await body.ReadAsync(new byte[1], Token));
    }

    [Fact]
    public async Task The_WebSocket_echo_returns_every_fragment_with_its_type_and_answers_a_close_with_the_same_status()
    {
        using var socket = new ClientWebSocket();
        await socket.ConnectAsync(new UriBuilder(fixture.Backend.BaseAddress) { Scheme = "ws", Path = "/loadtest/ws" }.Uri, Token);

        await socket.SendAsync("hello "u8.ToArray(), WebSocketMessageType.Text, endOfMessage: false, Token);
        await socket.SendAsync("world"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true, Token);
        byte[] binary = [.. Enumerable.Range(0, 300_000).Select(i => (byte)i)];
        await socket.SendAsync(binary, WebSocketMessageType.Binary, endOfMessage: true, Token);

        (WebSocketMessageType textType, byte[] text) = await WebSocketMessages.ReceiveAsync(socket, Token);
        (WebSocketMessageType binaryType, byte[] echoed) = await WebSocketMessages.ReceiveAsync(socket, Token);
        await socket.CloseAsync((WebSocketCloseStatus)4000, "bye", Token);

        Assert.Equal((WebSocketMessageType.Text, "hello world"), (textType, Encoding.UTF8.GetString(text)));
        Assert.Equal(WebSocketMessageType.Binary, binaryType);
        Assert.Equal(binary, echoed);
        Assert.Equal((WebSocketCloseStatus)4000, socket.CloseStatus);
    }

    [Fact]
    public async Task A_plain_GET_to_the_WebSocket_echo_gets_426_naming_the_upgrade()
    {
        using var response = await fixture.Client.GetAsync("loadtest/ws", Token);

        await ProblemAssert.IsProblemAsync(response, HttpStatusCode.UpgradeRequired, "WebSocket", Token);
        Assert.Contains("websocket", response.Headers.Upgrade.Select(product => product.Name));
    }

    [Fact]
    public async Task The_event_stream_sends_n_numbered_events_then_ends()
    {
        using var response = await fixture.Client.GetAsync("loadtest/sse?n=3&intervalMs=10", Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/event-stream", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal("id: 0\ndata: 0\n\nid: 1\ndata: 1\n\nid: 2\ndata: 2\n\n", await response.Content.ReadAsStringAsync(Token));
    }

    [Fact]
    public async Task An_endless_event_stream_sends_its_head_and_first_event_at_once_and_keeps_going()
    {
        using var response = await fixture.Client.GetAsync("loadtest/sse?n=0&intervalMs=20", HttpCompletionOption.ResponseHeadersRead, Token);
        using var reader = new StreamReader(await response.Content.ReadAsStreamAsync(Token));

        var lines = new List<string>();
        while (lines.Count < 30)
        {
            lines.Add(await reader.ReadLineAsync(Token) ?? throw new InvalidOperationException("the stream ended"));
        }

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(["id: 0", "data: 0", "", "id: 1", "data: 1", ""], lines.Take(6));
        Assert.Equal("id: 9", lines[27]);
    }

    [Theory]
    [InlineData("loadtest/sse?n=-1")]
    [InlineData("loadtest/sse?n=x")]
    [InlineData("loadtest/sse?intervalMs=60001")]
    public async Task An_event_stream_with_a_bad_query_is_400_problem_json(string path)
    {
        using var response = await fixture.Client.GetAsync(path, Token);

        await ProblemAssert.IsProblemAsync(response, HttpStatusCode.BadRequest, "intervalMs", Token);
    }
}
