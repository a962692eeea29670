using Microsoft.Extensions.Options;
using Tunnel2.TunnelClient.Configuration;

namespace Tunnel2.UnitTests.ClientUplinks;

/// <summary><c>TunnelClient:Uplink:Engine</c> is checked at start: Loop or Sockets, nothing else.</summary>
public sealed class UplinkEngineOptionTests
{
    [Theory]
    [InlineData("Loop", true)]
    [InlineData("Sockets", true)]
    [InlineData("loop", false)]
    [InlineData("epoll", false)]
    [InlineData("", false)]
    public void The_engine_is_checked_at_start(string engine, bool valid)
    {
        var options = new TunnelClientOptions { Token = "test-token", Session = "engine-test" };
        options.Uplink.Engine = engine;

        ValidateOptionsResult result = new TunnelClientOptionsAnnotations().Validate(null, options);

        Assert.True(valid == result.Succeeded, string.Join(" | ", result.Failures ?? []));
        if (!valid)
        {
            Assert.Contains(result.Failures!, failure => failure.Contains("TunnelClient:Uplink:Engine", StringComparison.Ordinal));
        }
    }

    [Fact]
    public void Loop_is_the_default()
    {
        Assert.Equal(ClientUplinkOptions.EngineLoop, new TunnelClientOptions().Uplink.Engine);
    }
}
