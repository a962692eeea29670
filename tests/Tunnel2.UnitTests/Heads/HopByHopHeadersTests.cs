using Tunnel2.Protocol.Heads;

namespace Tunnel2.UnitTests.Heads;

public sealed class HopByHopHeadersTests
{
    [Theory]
    [InlineData("Connection")]
    [InlineData("connection")]
    [InlineData("Keep-Alive")]
    [InlineData("KEEP-ALIVE")]
    [InlineData("TE")]
    [InlineData("te")]
    [InlineData("Trailer")]
    [InlineData("Transfer-Encoding")]
    [InlineData("transfer-encoding")]
    [InlineData("Upgrade")]
    [InlineData("Proxy-Authenticate")]
    [InlineData("Proxy-Authorization")]
    [InlineData("proxy-connection")]
    public void Hop_by_hop_headers_are_recognised_case_insensitively(string name)
    {
        Assert.True(HopByHopHeaders.Contains(name));
    }

    [Theory]
    [InlineData("Content-Type")]
    [InlineData("Content-Length")]
    [InlineData("Set-Cookie")]
    [InlineData("Host")]
    [InlineData("Trailers")]
    [InlineData("X-Connection")]
    [InlineData("")]
    public void End_to_end_headers_are_not(string name)
    {
        Assert.False(HopByHopHeaders.Contains(name));
    }
}
