using System.Net.Sockets;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

/// <summary>
/// A socket that wants nothing (its reads paused by its owner's backpressure, nothing queued to send) still hears of
/// a reset, and one that has hung up (both ways ended) while wanting nothing leaves the loop's set instead of waking it
/// every turn.
/// </summary>
public sealed class LoopSocketPausedEndingTests
{
    [Fact]
    public async Task A_peers_reset_while_reading_is_paused_and_nothing_waits_to_go_out_closes_the_socket()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");
        await harness.OnLoopAsync(() => peer.Socket!.ReadPaused = true);

        client.LingerState = new LingerOption(true, 0);
        client.Dispose();

        // Nothing else will wake this socket: only the error event that epoll reports for a registered descriptor.
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Closed is not null), "the loop told the owner of the reset");
        Assert.Equal(LoopErrorKind.Reset, (await harness.OnLoopAsync(() => peer.Closed))!.Value.Kind);
        Assert.True(await harness.OnLoopAsync(() => peer.Socket!.IsClosed));
    }

    [Fact]
    public async Task A_peers_reset_after_its_half_close_while_reading_is_paused_closes_the_socket()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        Socket client = await LoopHarness.ConnectAsync(peer.Port);
        client.Shutdown(SocketShutdown.Send);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.SawEnd), "the loop saw the end of the stream");

        client.LingerState = new LingerOption(true, 0);
        client.Dispose();

        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Closed is not null), "the loop told the owner of the reset");
        Assert.Equal(LoopErrorKind.Reset, (await harness.OnLoopAsync(() => peer.Closed))!.Value.Kind);
    }

    [Fact]
    public async Task A_socket_ended_both_ways_that_wants_nothing_leaves_the_set_and_reads_what_is_left_when_resumed()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");
        await harness.OnLoopAsync(() =>
        {
            peer.Socket!.ReadPaused = true;
            peer.Socket.ShutdownWrite();
        });
        Assert.Empty(await LoopHarness.ReadToEndAsync(client));

        await client.SendAsync("last words"u8.ToArray());
        client.Shutdown(SocketShutdown.Send);

        // The hang-up is level-triggered: kept in the set, the socket would wake the loop on every turn for nothing.
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => harness.Loop.RegisteredCount == 1), "the socket left the set (the listener stays)");
        await harness.OnLoopAsync(() => peer.Socket!.ReadPaused = false);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.SawEnd), "the resumed read reached the end of the stream");
        Assert.Equal("last words", await harness.OnLoopAsync(() => peer.Received()));
    }
}
