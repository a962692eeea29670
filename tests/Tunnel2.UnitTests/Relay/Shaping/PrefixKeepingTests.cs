using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Relay.Shaping;

namespace Tunnel2.UnitTests.Relay.Shaping;

public sealed class PrefixKeepingTests
{
    [Theory]
    [InlineData("/", "/session/jup/")]
    [InlineData("/tree?x=%2F", "/session/jup/tree?x=%2F")]
    [InlineData("/api/kernels/a%2Fb", "/session/jup/api/kernels/a%2Fb")]
    public void The_prefix_the_server_removed_is_put_back_and_no_longer_announced(string target, string expected)
    {
        var head = new RequestHead("POST", target, [new("X-Forwarded-Prefix", "/session/jup"), new("Accept", "*/*")], isUpgrade: false);

        RequestHead kept = PrefixKeeping.Restore(head);

        Assert.Equal(("POST", expected), (kept.Method, kept.Target));
        Assert.Equal([new HeaderField("Accept", "*/*")], kept.Headers);
    }

    [Fact]
    public void An_upgrade_stays_an_upgrade()
    {
        var head = new RequestHead("GET", "/api/kernels/k/channels", [new("Upgrade", "websocket"), new("X-Forwarded-Prefix", "/session/jup")]);

        Assert.True(PrefixKeeping.Restore(head).IsUpgrade);
    }

    [Fact]
    public void Host_mode_removed_no_prefix_so_the_head_is_left_as_it_is()
    {
        var head = new RequestHead("GET", "/tree", [new("X-Forwarded-Host", "jup.apps.test")]);

        Assert.Same(head, PrefixKeeping.Restore(head));
    }
}
