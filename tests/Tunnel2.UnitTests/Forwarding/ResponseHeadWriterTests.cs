using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Forwarding;

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
}
