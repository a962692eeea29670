using System.Net.Sockets;
using System.Text;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

/// <summary>
/// A loop socket lets its descriptor go (the public listener handing an upgraded caller to its relay): it leaves the
/// set, its owner hears nothing more of it, and the descriptor stays open for the next owner, who can adopt it again.
/// </summary>
public sealed class LoopSocketReleaseTests
{
    [Fact]
    public async Task A_released_descriptor_leaves_the_set_stays_open_and_is_read_by_its_next_owner()
    {
        using var harness = new LoopHarness();
        var first = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(first.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => first.Socket is not null), "the loop accepted");
        int registered = await harness.OnLoopAsync(() => harness.Loop.RegisteredCount);

        int fd = await harness.OnLoopAsync(() => first.Socket!.Release());

        Assert.Equal(registered - 1, await harness.OnLoopAsync(() => harness.Loop.RegisteredCount));
        Assert.True(await harness.OnLoopAsync(() => first.Socket!.IsClosed));
        await client.SendAsync("after the release"u8.ToArray());
        var next = new ScriptedPeer(harness);
        await harness.OnLoopAsync(() => next.Socket = LoopSocket.Adopt(harness.Loop, fd, next));
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => next.Received() == "after the release"), "the next owner read the bytes");
        Assert.Equal(string.Empty, await harness.OnLoopAsync(first.Received));

        await harness.OnLoopAsync(() => next.Socket!.Send(Encoding.ASCII.GetBytes("from the next owner")));
        await harness.OnLoopAsync(() => next.Socket!.CloseAfterDrain());
        Assert.Equal("from the next owner", Encoding.ASCII.GetString(await LoopHarness.ReadToEndAsync(client)));
        Assert.Null(await harness.OnLoopAsync(() => first.Closed));
        Assert.Empty(harness.Faults);
    }

    [Fact]
    public async Task A_reset_after_the_release_reaches_the_next_owner_not_the_first()
    {
        using var harness = new LoopHarness();
        var first = await ScriptedPeer.StartAsync(harness);
        Socket client = await LoopHarness.ConnectAsync(first.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => first.Socket is not null), "the loop accepted");
        int fd = await harness.OnLoopAsync(() => first.Socket!.Release());

        client.LingerState = new LingerOption(true, 0);
        client.Dispose(); // reset while the descriptor is in no set: the next owner's registration reports it
        var next = new ScriptedPeer(harness);
        await harness.OnLoopAsync(() => next.Socket = LoopSocket.Adopt(harness.Loop, fd, next));

        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => next.Closed is not null || next.Failure is not null), "the next owner heard of the reset");
        Assert.Null(await harness.OnLoopAsync(() => first.Closed));
    }

    [Fact]
    public async Task A_closed_socket_cannot_be_released()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");
        await harness.OnLoopAsync(() => peer.Socket!.Close());

        await Assert.ThrowsAsync<InvalidOperationException>(() => harness.OnLoopAsync(() => peer.Socket!.Release()));
    }
}
