using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.Loops;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.EventLoops;

namespace Tunnel2.UnitTests.Relay.OnLoop;

/// <summary><c>TunnelClient:Backends:Relay</c>: checked at start, Loop by default, and the loop only for plain-HTTP backends with the uplinks on it.</summary>
public sealed class BackendRelayOptionTests : IDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly TunnelClientMetrics _metrics;
    private readonly ClientLoop _loop = new(NullLogger<ClientLoop>.Instance);

    public BackendRelayOptionTests() => _metrics = new TunnelClientMetrics(_services.GetRequiredService<IMeterFactory>());

    [Theory]
    [InlineData("Loop", true)]
    [InlineData("Tasks", true)]
    [InlineData("loop", false)]
    [InlineData("", false)]
    public void The_relay_is_checked_at_start(string relay, bool valid)
    {
        var options = new TunnelClientOptions { Token = "test-token", Session = "relay-test" };
        options.Backends.Relay = relay;

        ValidateOptionsResult result = new TunnelClientOptionsAnnotations().Validate(null, options);

        Assert.True(valid == result.Succeeded, string.Join(" | ", result.Failures ?? []));
        if (!valid)
        {
            Assert.Contains(result.Failures!, failure => failure.Contains("TunnelClient:Backends:Relay", StringComparison.Ordinal));
        }
    }

    [Fact]
    public void Loop_is_the_default()
    {
        Assert.Equal(BackendsOptions.RelayLoop, new TunnelClientOptions().Backends.Relay);
    }

    [Theory]
    [InlineData("http://127.0.0.1:1, http://127.0.0.1:2", "Loop", "Loop", true)]
    [InlineData("http://127.0.0.1:1, https://127.0.0.1:2", "Loop", "Loop", false)]
    [InlineData("http://127.0.0.1:1", "Tasks", "Loop", false)]
    [InlineData("http://127.0.0.1:1", "Loop", "Sockets", false)]
    public async Task The_loop_holds_the_connections_only_when_chosen_and_every_backend_is_plain_http(string urls, string relay, string engine, bool onLoop)
    {
        var options = new TunnelClientOptions { Backends = new() { Urls = urls, Relay = relay } };
        options.Uplink.Engine = engine;

        await using var set = new BackendSet(Options.Create(options), _metrics, NullLogger<BackendSet>.Instance, loop: _loop);

        Assert.Equal(onLoop && EventLoop.IsSupported, set.UsesLoop);
        Assert.Equal(relay == "Loop" && engine == "Loop" && EventLoop.IsSupported, set.All[0].Pool.UsesLoop);
    }

    public void Dispose()
    {
        _loop.Dispose();
        _metrics.Dispose();
        _services.Dispose();
    }
}
