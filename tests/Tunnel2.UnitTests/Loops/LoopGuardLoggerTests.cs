using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.Loops.Guard;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Tcp;

namespace Tunnel2.UnitTests.Loops;

/// <summary>The guard around a logger: a log call on a loop thread fails there, and the TCP relay counts it as a fault.</summary>
public sealed class LoopGuardLoggerTests
{
    [Fact]
    public async Task A_log_call_on_the_loop_trips_and_one_off_it_reaches_the_wrapped_logger()
    {
        using var harness = new LoopHarness();
        var inner = new CountingLogger();
        var logger = new LoopGuardLogger(inner);

        Exception? onLoop = await harness.OnLoopAsync(() => Record.Exception(() => Write(logger, "on the loop")));
        Write(logger, "off the loop");

        Assert.IsType<BlockingCallOnLoopException>(onLoop);
        Assert.Equal(1, inner.Lines);
    }

    [Fact]
    public async Task The_tcp_relay_counts_a_log_call_its_loop_made_as_a_fault()
    {
        var options = new TunnelClientOptions();
        options.Tcp.Target = "127.0.0.1:9";
        using var relay = new LoopTargetRelay(Options.Create(options), NullLogger<LoopTargetRelay>.Instance);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        relay.Loop.Post(() => Write(relay.Logger, "a stray line on the loop"));
        relay.Loop.Post(done.SetResult);
        await done.Task.WaitAsync(LoopHarness.Timeout);

        Assert.Equal(1, relay.FaultCount);
    }

    /// <summary>A log call through the interface itself, as generated log methods make it.</summary>
    private static void Write(ILogger logger, string message)
    {
        if (logger.IsEnabled(LogLevel.Information))
        {
            logger.Log(LogLevel.Information, default, message, null, static (text, _) => text);
        }
    }

    private sealed class CountingLogger : ILogger
    {
        public int Lines { get; private set; }

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) => Lines++;
    }
}
