using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>
/// Issue 52 stage 2b: the server's TCP door relays its callers on the <c>tcp-callers</c> loop with the relay the client
/// shares (both ends here run on loops), against real caller and target sockets: bytes intact both ways over many
/// callers, half-close each way, resets each way, the target speaking first, a slow caller bounded then complete, the
/// idle sweep, and the loop's guard against blocking calls.
/// </summary>
[Collection(SerialCollection.Name)]
public sealed class LoopDoorTests
{
    /// <summary>
    /// The door's own line for a caller that reset. The client logs its end of the same stream too ("the server reset the
    /// stream (Cancelled: the caller went away)"), on another thread: either line may come first.
    /// </summary>
    internal const string CallerGoneLine = "ended: the caller went away (";

    private static readonly Action<ILogger, Exception?> Stray =
        LoggerMessage.Define(LogLevel.Information, new EventId(1, "Stray"), "A log call made on the callers' loop");

    [Theory]
    [InlineData(TcpServerOptions.EngineLoop, 20, 1 << 20)]
    [InlineData(TcpServerOptions.EngineLoop, 1000, 2048)]
    [InlineData(TcpServerOptions.EngineSockets, 20, 1 << 20)]
    public async Task Many_callers_at_once_carry_their_bytes_intact_both_ways(string engine, int callers, int size)
    {
        await using var door = LoopDoorHarness.Start(engine);
        Task echo = LoopTargetRelayTests.EchoTargetsAsync(door.AcceptTargetAsync, callers);

        var exchanges = new Task<bool>[callers];
        for (int i = 0; i < callers; i++)
        {
            exchanges[i] = ExchangeAsync(await door.ConnectAsync(), LoopTargetRelayTests.Payload(size, seed: i));
        }

        bool[] intact = await Task.WhenAll(exchanges).WaitAsync(TimeSpan.FromSeconds(180));
        await echo.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.All(intact, Assert.True);
        await door.WaitDrainedAsync();
        await door.WaitForLineAsync("ended: closed by both sides");
    }

    [Fact]
    public async Task The_callers_fin_reaches_the_target_which_still_answers()
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        await caller.SendAsync("QUIT\r\n"u8.ToArray());
        using Socket target = await door.AcceptTargetAsync();
        caller.Shutdown(SocketShutdown.Send);

        Assert.Equal("QUIT\r\n"u8.ToArray(), await LoopTargetRelayTests.ReadToEndAsync(target));
        await target.SendAsync("+OK bye\r\n"u8.ToArray());
        target.Shutdown(SocketShutdown.Send);
        Assert.Equal("+OK bye\r\n"u8.ToArray(), await LoopTargetRelayTests.ReadToEndAsync(caller));
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task The_target_speaks_first_and_its_fin_reaches_the_caller_which_still_sends()
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        using Socket target = await door.AcceptTargetAsync();
        await target.SendAsync("SSH-2.0-banner\r\n"u8.ToArray());
        target.Shutdown(SocketShutdown.Send);

        // The banner came while the door was still dispatching (in the stream's pipe): it goes to the caller first.
        Assert.Equal("SSH-2.0-banner\r\n"u8.ToArray(), await LoopTargetRelayTests.ReadToEndAsync(caller));
        await caller.SendAsync("late\r\n"u8.ToArray());
        caller.Shutdown(SocketShutdown.Send);
        Assert.Equal("late\r\n"u8.ToArray(), await LoopTargetRelayTests.ReadToEndAsync(target));
        await door.WaitForLineAsync("closed by both sides");
    }

    [Fact]
    public async Task A_caller_that_resets_cuts_the_target_and_is_logged_as_gone()
    {
        await using var door = LoopDoorHarness.Start();
        Socket caller = await door.ConnectAsync();
        await caller.SendAsync("hello"u8.ToArray());
        using Socket target = await door.AcceptTargetAsync();
        Assert.Equal("hello"u8.ToArray(), await ReadAsync(target, 5));

        caller.LingerState = new LingerOption(true, 0);
        caller.Dispose();

        await Assert.ThrowsAsync<SocketException>(async () => await LoopTargetRelayTests.ReadToEndAsync(target));
        string line = await door.WaitForLineAsync(CallerGoneLine);
        Assert.Contains("Connection reset by peer", line, StringComparison.Ordinal);
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_target_that_resets_resets_the_caller_and_is_logged_as_the_clients_reset()
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        await caller.SendAsync("hello"u8.ToArray());
        Socket target = await door.AcceptTargetAsync();
        Assert.Equal("hello"u8.ToArray(), await ReadAsync(target, 5));
        await target.SendAsync("hi"u8.ToArray());
        Assert.Equal("hi"u8.ToArray(), await ReadAsync(caller, 2));

        target.LingerState = new LingerOption(true, 0);
        target.Dispose();

        await Assert.ThrowsAsync<SocketException>(async () => await LoopTargetRelayTests.ReadToEndAsync(caller));
        await door.WaitForLineAsync("the client reset the stream (BackendAborted: its target broke the connection)");
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_caller_that_stops_reading_holds_the_target_at_a_bound_and_then_gets_every_byte()
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        await caller.SendAsync("GET"u8.ToArray());
        using Socket target = await door.AcceptTargetAsync();
        Assert.Equal("GET"u8.ToArray(), await ReadAsync(target, 3));
        byte[] payload = LoopTargetRelayTests.Payload(64 << 20, seed: 9);
        long sent = 0;
        Task send = SendAllAsync(target, payload, n => Interlocked.Add(ref sent, n));

        long stalledAt = await LoopTargetBackpressureTests.StalledAsync(() => Interlocked.Read(ref sent));
        Assert.False(send.IsCompleted);
        Assert.InRange(stalledAt, 1, 24 << 20);

        Task<byte[]> read = LoopTargetRelayTests.ReadToEndAsync(caller);
        await send.WaitAsync(TimeSpan.FromSeconds(60));
        target.Shutdown(SocketShutdown.Send);
        byte[] all = await read.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.True(payload.AsSpan().SequenceEqual(all));
    }

    [Fact]
    public async Task The_idle_sweep_cuts_a_quiet_caller_and_its_target()
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        await caller.SendAsync("x"u8.ToArray());
        using Socket target = await door.AcceptTargetAsync();
        Assert.Equal("x"u8.ToArray(), await ReadAsync(target, 1));
        await target.SendAsync("y"u8.ToArray());
        Assert.Equal("y"u8.ToArray(), await ReadAsync(caller, 1)); // relayed: past the dispatch, which the sweep does not see

        door.SweepIdle();

        await Assert.ThrowsAsync<SocketException>(async () => await LoopTargetRelayTests.ReadToEndAsync(caller));
        Assert.True(await EndsAsync(target));
        await door.WaitForLineAsync("ended: idle timeout");
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_caller_that_comes_after_the_loop_stopped_is_cut_counted_and_logged()
    {
        await using var door = LoopDoorHarness.Start();
        door.StopCallerLoop();
        using Socket caller = await door.ConnectAsync();
        await caller.SendAsync("x"u8.ToArray());
        using Socket target = await door.AcceptTargetAsync();
        Assert.Equal("x"u8.ToArray(), await ReadAsync(target, 1));
        await target.SendAsync("y"u8.ToArray()); // the target answers: the dispatch hands the caller to the (stopped) loop

        Assert.True(await EndsAsync(caller));
        await door.WaitForLineAsync("ended: cut: the server is stopping");
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_log_call_made_on_the_callers_loop_is_caught_and_counted_as_a_fault()
    {
        using var loop = new TcpCallerLoop(NullLogger.Instance);
        using var faulted = new SemaphoreSlim(0);

        loop.Loop.Post(static state =>
        {
            var (callers, done) = ((TcpCallerLoop, SemaphoreSlim))state!;
            try
            {
                Stray(callers.Logger, null);
            }
            finally
            {
                done.Release();
            }
        }, (loop, faulted));

        Assert.True(await faulted.WaitAsync(TimeSpan.FromSeconds(30)));
        DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (loop.FaultCount == 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }

        Assert.Equal(1, loop.FaultCount);
    }

    internal static async Task<bool> ExchangeAsync(Socket caller, byte[] payload)
    {
        using (caller)
        {
            Task<byte[]> back = LoopTargetRelayTests.ReadToEndAsync(caller);
            await caller.SendAsync(payload);
            caller.Shutdown(SocketShutdown.Send);
            byte[] received = await back;
            return payload.AsSpan().SequenceEqual(received);
        }
    }

    internal static async Task<byte[]> ReadAsync(Socket socket, int count)
    {
        byte[] buffer = new byte[count];
        int filled = 0;
        while (filled < count)
        {
            int n = await socket.ReceiveAsync(buffer.AsMemory(filled)).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            Assert.True(n > 0, $"the connection ended after {filled} of {count} bytes");
            filled += n;
        }

        return buffer;
    }

    internal static async Task<bool> EndsAsync(Socket socket)
    {
        try
        {
            await LoopTargetRelayTests.ReadToEndAsync(socket);
        }
        catch (SocketException)
        {
            // a reset ends it too
        }

        return true;
    }

    private static async Task SendAllAsync(Socket socket, byte[] payload, Action<int> sent)
    {
        for (int offset = 0; offset < payload.Length; offset += 64 * 1024)
        {
            int n = await socket.SendAsync(payload.AsMemory(offset, Math.Min(64 * 1024, payload.Length - offset)));
            sent(n);
        }
    }
}
