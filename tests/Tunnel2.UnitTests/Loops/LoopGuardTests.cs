using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Tunnel2.Loops;
using Tunnel2.Loops.Guard;

namespace Tunnel2.UnitTests.Loops;

/// <summary>Issue 52 item 5: a blocking call on a loop thread fails; the same call handed to the thread pool passes.</summary>
public sealed class LoopGuardTests
{
    public static TheoryData<string> BlockingCalls => ["dns", "connect", "tls", "logging"];

    [Theory]
    [MemberData(nameof(BlockingCalls))]
    public async Task A_blocking_call_made_in_a_loop_callback_trips_the_guard(string call)
    {
        using var harness = new LoopHarness();

        Exception? tripped = await harness.OnLoopAsync(() => Record.Exception(() => Call(call)));

        Assert.IsType<BlockingCallOnLoopException>(Unwrap(tripped));
    }

    [Fact]
    public async Task A_blocking_call_left_uncaught_in_a_loop_callback_reaches_the_loops_fault_handler()
    {
        var faults = new List<Exception>();
        using var loop = new EventLoop("guarded", faults.Add);
        var after = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);

        loop.Post(() => GuardedCalls.ResolveAsync("localhost", CancellationToken.None));
        loop.Post(() => after.SetResult(faults.Count));

        Assert.Equal(1, await after.Task.WaitAsync(LoopHarness.Timeout));
        Assert.IsType<BlockingCallOnLoopException>(faults[0]);
    }

    [Theory]
    [MemberData(nameof(BlockingCalls))]
    public async Task The_same_call_handed_to_the_thread_pool_passes_and_its_result_comes_back_on_the_loop(string call)
    {
        using var harness = new LoopHarness();
        var back = new TaskCompletionSource<(bool OnLoop, Exception? Fault)>(TaskCreationOptions.RunContinuationsAsynchronously);

        await harness.OnLoopAsync(() => LoopGuard.OffLoop(
            harness.Loop,
            async () => { await Task.Yield(); return Record.Exception(() => Call(call)); },
            done => back.SetResult((harness.Loop.IsOnLoopThread, done.Result))));

        (bool onLoop, Exception? fault) = await back.Task.WaitAsync(LoopHarness.Timeout);
        Assert.True(onLoop);
        Assert.Null(fault);
    }

    /// <summary>Each guarded entry point, started as a loop callback would; the call's own outcome does not matter here.</summary>
    private static void Call(string call)
    {
        switch (call)
        {
            case "dns":
                _ = GuardedCalls.ResolveAsync("localhost", CancellationToken.None);
                break;
            case "connect":
                using (var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
                {
                    _ = GuardedCalls.ConnectAsync(socket, new IPEndPoint(IPAddress.Loopback, 9), CancellationToken.None).AsTask();
                }
                break;
            case "tls":
                _ = GuardedCalls.AuthenticateAsClientAsync(new SslStream(new MemoryStream()), new SslClientAuthenticationOptions { TargetHost = "localhost" }, CancellationToken.None);
                break;
            default:
                using (ILoggerFactory logging = LoggerFactory.Create(builder => builder.AddProvider(new LoopGuardLoggerProvider())))
                {
                    Stray(logging.CreateLogger("relay"), null);
                }
                break;
        }
    }

    private static readonly Action<ILogger, Exception?> Stray =
        LoggerMessage.Define(LogLevel.Warning, new EventId(1, "Stray"), "A log call made on the loop");

    /// <summary>The logging framework gathers its providers' failures into an AggregateException.</summary>
    private static Exception? Unwrap(Exception? fault) => fault is AggregateException { InnerExceptions: [var only] } ? only : fault;
}
