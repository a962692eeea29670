using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.Loops;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Tcp;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary><c>TunnelClient:Tcp:Engine</c>: checked at start, and it picks the relay (the loop only where it runs).</summary>
public sealed class TcpEngineOptionTests
{
    [Theory]
    [InlineData("Loop", true)]
    [InlineData("Sockets", true)]
    [InlineData("loop", false)]
    [InlineData("epoll", false)]
    public void The_engine_is_checked_at_start(string engine, bool valid)
    {
        var options = new TunnelClientOptions();
        options.Tcp.Target = "127.0.0.1:6379";
        options.Tcp.Engine = engine;

        ValidateOptionsResult result = new TcpClientOptionsValidator().Validate(null, options);

        Assert.Equal(valid, result.Succeeded);
        if (!valid)
        {
            Assert.Contains("TunnelClient:Tcp:Engine", Assert.Single(result.Failures!), StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData("Loop", "127.0.0.1:6379", true)]
    [InlineData("Sockets", "127.0.0.1:6379", false)]
    [InlineData("Loop", null, false)]
    public void The_loop_relays_the_targets_when_chosen_and_supported(string engine, string? target, bool loop)
    {
        var options = new TunnelClientOptions();
        options.Tcp.Target = target;
        options.Tcp.Engine = engine;
        using ServiceProvider services = new ServiceCollection()
            .AddSingleton(Options.Create(options))
            .AddSingleton<ILoggerFactory>(NullLoggerFactory.Instance)
            .AddSingleton(typeof(ILogger<>), typeof(Logger<>))
            .AddSingleton<TcpTargetRelay>()
            .AddSingleton<LoopTargetRelay>()
            .BuildServiceProvider();

        ITcpTargetRelay relay = LoopTargetRelay.Choose(services);

        Assert.Equal(loop && EventLoop.IsSupported, relay is LoopTargetRelay);
        Assert.Equal(!(loop && EventLoop.IsSupported), relay is TcpTargetRelay);
    }
}
