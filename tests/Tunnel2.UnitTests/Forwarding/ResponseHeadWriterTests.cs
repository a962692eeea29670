using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Heads;

namespace Tunnel2.UnitTests.Forwarding;

public sealed class ResponseHeadWriterTests
{
    [Fact]
    public void Applies_status_and_end_to_end_headers_keeping_repeats_apart()
    {
        var context = new DefaultHttpContext();
        var head = new ResponseHead(418,
        [
            new("Set-Cookie", "a=1"),
            new("Set-Cookie", "b=2"),
            new("Content-Type", "text/plain"),
            new("Connection", "close"),
            new("Transfer-Encoding", "chunked"),
            new("Keep-Alive", "timeout=5"),
        ]);

        ResponseHeadWriter.Apply(head, context.Response);

        Assert.Equal(418, context.Response.StatusCode);
        Assert.Equal(["a=1", "b=2"], context.Response.Headers.SetCookie.Select(v => v ?? string.Empty));
        Assert.Equal("text/plain", context.Response.ContentType);
        Assert.False(context.Response.Headers.ContainsKey("Connection"));
        Assert.False(context.Response.Headers.ContainsKey("Transfer-Encoding"));
        Assert.False(context.Response.Headers.ContainsKey("Keep-Alive"));
    }

    [Fact]
    public void A_101_keeps_the_Upgrade_field_that_names_the_protocol_and_other_answers_drop_it()
    {
        var switching = new DefaultHttpContext();
        var declined = new DefaultHttpContext();

        ResponseHeadWriter.Apply(new ResponseHead(101, [new("Upgrade", "websocket"), new("Sec-WebSocket-Accept", "abc=")]), switching.Response);
        ResponseHeadWriter.Apply(new ResponseHead(426, [new("Upgrade", "websocket")]), declined.Response);

        Assert.Equal("websocket", switching.Response.Headers.Upgrade);
        Assert.Equal("abc=", switching.Response.Headers.SecWebSocketAccept);
        Assert.False(declined.Response.Headers.ContainsKey("Upgrade"));
    }

    [Fact]
    public void A_101_to_an_HTTP2_extended_CONNECT_is_a_200_without_the_HTTP11_handshake_fields()
    {
        var context = new DefaultHttpContext();

        ResponseHeadWriter.Apply(
            new ResponseHead(101, [new("Upgrade", "websocket"), new("Sec-WebSocket-Accept", "abc="), new("Sec-WebSocket-Protocol", "chat")]),
            context.Response,
            extendedConnect: true);

        Assert.Equal(200, context.Response.StatusCode);
        Assert.False(context.Response.Headers.ContainsKey("Upgrade"));
        Assert.False(context.Response.Headers.ContainsKey("Sec-WebSocket-Accept"));
        Assert.Equal("chat", context.Response.Headers["Sec-WebSocket-Protocol"]);
    }
}
