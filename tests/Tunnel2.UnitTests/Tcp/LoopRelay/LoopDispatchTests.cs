using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>
/// The server's TCP dispatch with the callers' loop (issue 52): the wait for a caller's first bytes is the loop's
/// readiness, so the caller's socket is watched by the loop's epoll set alone, never by the runtime's; and the dispatch
/// keeps its meaning: a caller that speaks first is tried on the next client with its bytes when a target refuses
/// (a crowd of 1,000), the target may speak first, a caller gone mid-dispatch is logged as gone, the cap counts callers
/// still being dispatched, and every caller leaves the drain's count.
/// </summary>
[Collection(SerialCollection.Name)]
public sealed class LoopDispatchTests
{
    private const string RefusedLine = "nothing reached a target, so another client may take it";

    private static readonly byte[] Banner = "SSH-2.0-target\r\n"u8.ToArray();

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_relayed_callers_socket_is_watched_by_the_callers_loop_alone(bool callerFirst)
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        if (callerFirst)
        {
            await caller.SendAsync("hello"u8.ToArray());
        }

        using Socket target = await door.AcceptTargetAsync();
        if (callerFirst)
        {
            Assert.Equal("hello"u8.ToArray(), await LoopDoorTests.ReadAsync(target, 5));
        }

        await target.SendAsync("hi"u8.ToArray());
        Assert.Equal("hi"u8.ToArray(), await LoopDoorTests.ReadAsync(caller, 2));
        await caller.SendAsync("more"u8.ToArray()); // read by the loop: relayed, past the dispatch
        Assert.Equal("more"u8.ToArray(), await LoopDoorTests.ReadAsync(target, 4));

        // One set: the loop's. A socket the dispatch had awaited on the runtime's sockets would be in its set as well.
        Assert.Equal(1, EpollSets.Watching(door.Port, ((IPEndPoint)caller.LocalEndPoint!).Port));
    }

    [Theory]
    [InlineData(TcpServerOptions.EngineLoop, 1000)]
    [InlineData(TcpServerOptions.EngineSockets, 50)]
    public async Task Callers_that_speak_first_are_tried_on_the_next_client_with_their_bytes_when_a_target_refuses(string engine, int callers)
    {
        await using var door = LoopDoorHarness.Start(engine, new DoorSetup(RefusingClient: true));
        Task echo = LoopTargetRelayTests.EchoTargetsAsync(door.AcceptTargetAsync, callers);

        var exchanges = new Task<bool>[callers];
        for (int i = 0; i < callers; i++)
        {
            exchanges[i] = EchoedAsync(await door.ConnectAsync(), Encoding.ASCII.GetBytes($"hello {i}, before any target answered"));
        }

        bool[] intact = await Task.WhenAll(exchanges).WaitAsync(TimeSpan.FromSeconds(180));
        await echo.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.All(intact, Assert.True);

        // Round robin, never ejected: about every other caller met the refusing client first, then got through.
        int refused = door.Lines.Count(line => line.Contains(RefusedLine, StringComparison.Ordinal));
        Assert.InRange(refused, callers / 4, callers);
        Assert.DoesNotContain(door.Lines, line => line.Contains("every client's target refused", StringComparison.Ordinal));
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_crowd_of_callers_that_wait_gets_targets_that_speak_first_past_a_refusing_client()
    {
        const int callers = 1000;
        await using var door = LoopDoorHarness.Start(TcpServerOptions.EngineLoop, new DoorSetup(RefusingClient: true));
        Task targets = BannerThenEchoAsync(door, callers);

        var exchanges = new Task<bool>[callers];
        for (int i = 0; i < callers; i++)
        {
            exchanges[i] = GreetedAsync(await door.ConnectAsync(), Encoding.ASCII.GetBytes($"after the banner {i}"));
        }

        bool[] intact = await Task.WhenAll(exchanges).WaitAsync(TimeSpan.FromSeconds(180));
        await targets.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.All(intact, Assert.True);
        Assert.InRange(door.Lines.Count(line => line.Contains(RefusedLine, StringComparison.Ordinal)), callers / 4, callers);
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_caller_that_waits_gets_the_target_that_speaks_first_past_a_refusing_client()
    {
        await using var door = LoopDoorHarness.Start(TcpServerOptions.EngineLoop, new DoorSetup(RefusingClient: true));
        for (int i = 0; i < 4; i++)
        {
            using Socket caller = await door.ConnectAsync();
            using Socket target = await door.AcceptTargetAsync();
            await target.SendAsync("banner\r\n"u8.ToArray());
            Assert.Equal("banner\r\n"u8.ToArray(), await LoopDoorTests.ReadAsync(caller, 8));
            await caller.SendAsync("ok"u8.ToArray());
            Assert.Equal("ok"u8.ToArray(), await LoopDoorTests.ReadAsync(target, 2));
        }

        Assert.Contains(door.Lines, line => line.Contains(RefusedLine, StringComparison.Ordinal));
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_caller_that_resets_while_dispatched_is_logged_as_gone_and_its_target_cut()
    {
        await using var door = LoopDoorHarness.Start();
        Socket caller = await door.ConnectAsync();
        using Socket target = await door.AcceptTargetAsync(); // the target said nothing: the caller is still being dispatched

        caller.LingerState = new LingerOption(true, 0);
        caller.Dispose();

        Assert.True(await LoopDoorTests.EndsAsync(target));
        string line = await door.WaitForLineAsync(LoopDoorTests.CallerGoneLine);
        Assert.Contains("Connection reset by peer", line, StringComparison.Ordinal);
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_caller_that_ends_before_a_word_passes_its_fin_to_the_target()
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        using Socket target = await door.AcceptTargetAsync();

        caller.Shutdown(SocketShutdown.Send);

        Assert.Empty(await LoopTargetRelayTests.ReadToEndAsync(target));
        await target.SendAsync("bye"u8.ToArray());
        target.Shutdown(SocketShutdown.Send);
        Assert.Equal("bye"u8.ToArray(), await LoopTargetRelayTests.ReadToEndAsync(caller));
        await door.WaitForLineAsync("closed by both sides");
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task A_caller_still_dispatched_when_the_loop_stops_is_cut_counted_and_logged()
    {
        await using var door = LoopDoorHarness.Start();
        using Socket caller = await door.ConnectAsync();
        using Socket target = await door.AcceptTargetAsync(); // neither side said a word: the loop waits for the caller

        door.StopCallerLoop();

        Assert.True(await LoopDoorTests.EndsAsync(caller));
        await door.WaitForLineAsync("ended: cut: the server is stopping");
        await door.WaitDrainedAsync();
    }

    [Fact]
    public async Task The_cap_counts_callers_still_being_dispatched_on_the_loop()
    {
        await using var door = LoopDoorHarness.Start(TcpServerOptions.EngineLoop, new DoorSetup(MaxConnections: 3));
        var waiting = new List<Socket>();
        var targets = new List<Socket>();
        for (int i = 0; i < 3; i++)
        {
            waiting.Add(await door.ConnectAsync());
            targets.Add(await door.AcceptTargetAsync()); // each opened a stream: dispatched, neither side said a word
        }

        Assert.True(await RefusedAsync(door));
        await door.WaitForLineAsync("too many connections (3 open");

        foreach (Socket socket in waiting.Concat(targets))
        {
            socket.Dispose();
        }

        await door.WaitDrainedAsync();
    }

    /// <summary>
    /// The caller's line comes back, then its FIN and the target's. The FIN waits for the echo: a caller that sends more
    /// (its FIN too) while the dispatch still waits ends the dispatch, and a refusal after that is the relay's reset.
    /// </summary>
    private static async Task<bool> EchoedAsync(Socket caller, byte[] line)
    {
        using (caller)
        {
            await caller.SendAsync(line);
            byte[] back = await LoopDoorTests.ReadAsync(caller, line.Length);
            caller.Shutdown(SocketShutdown.Send);
            return back.AsSpan().SequenceEqual(line) && (await LoopTargetRelayTests.ReadToEndAsync(caller)).Length == 0;
        }
    }

    /// <summary>A caller over the cap: reset at once, which may come before its connect has returned.</summary>
    private static async Task<bool> RefusedAsync(LoopDoorHarness door)
    {
        try
        {
            using Socket caller = await door.ConnectAsync();
            return (await LoopTargetRelayTests.ReadToEndAsync(caller)).Length == 0;
        }
        catch (SocketException ex)
        {
            return ex.SocketErrorCode == SocketError.ConnectionReset;
        }
    }

    /// <summary>The caller reads the target's banner, then its own line comes back, then both FINs.</summary>
    private static async Task<bool> GreetedAsync(Socket caller, byte[] line)
    {
        using (caller)
        {
            bool greeted = (await LoopDoorTests.ReadAsync(caller, Banner.Length)).AsSpan().SequenceEqual(Banner);
            return greeted && await EchoedAsync(caller, line);
        }
    }

    /// <summary>Targets that speak first (as SSH and SMTP do), then echo to the end.</summary>
    private static async Task BannerThenEchoAsync(LoopDoorHarness door, int count)
    {
        var targets = new List<Task>(count);
        for (int i = 0; i < count; i++)
        {
            Socket target = await door.AcceptTargetAsync();
            targets.Add(Task.Run(async () =>
            {
                await target.SendAsync(Banner);
                await LoopTargetRelayTests.EchoAsync(target);
            }));
        }

        await Task.WhenAll(targets);
    }
}
