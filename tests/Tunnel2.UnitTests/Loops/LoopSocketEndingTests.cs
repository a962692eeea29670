using System.Net.Sockets;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

/// <summary>Half-closes both ways, resets both ways, a failed connect, a connect reset at once, and a loop stopping with sockets open.</summary>
public sealed class LoopSocketEndingTests
{
    [Fact]
    public async Task After_the_peer_half_closes_the_loop_socket_can_still_send()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(peer.Port);

        await client.SendAsync("question"u8.ToArray());
        client.Shutdown(SocketShutdown.Send);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.SawEnd), "the loop saw the end of the stream");
        await harness.OnLoopAsync(() =>
        {
            Assert.Equal(SendStatus.Sent, peer.Socket!.Send("answer"u8));
            peer.Socket.ShutdownWrite();
        });

        Assert.Equal("answer"u8.ToArray(), await LoopHarness.ReadToEndAsync(client));
        Assert.Equal("question", await harness.OnLoopAsync(() => peer.Received()));
    }

    [Fact]
    public async Task After_the_loop_socket_half_closes_the_peer_can_still_send()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");

        await harness.OnLoopAsync(() => peer.Socket!.ShutdownWrite());
        Assert.Empty(await LoopHarness.ReadToEndAsync(client));
        Assert.Equal(SendStatus.Closed, await harness.OnLoopAsync(() => peer.Socket!.Send("late"u8)));
        await client.SendAsync("still talking"u8.ToArray());
        client.Shutdown(SocketShutdown.Send);

        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.SawEnd), "the loop saw the end of the stream");
        Assert.Equal("still talking", await harness.OnLoopAsync(() => peer.Received()));
    }

    [Fact]
    public async Task A_peers_reset_comes_back_as_a_value_not_an_exception()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");

        client.LingerState = new LingerOption(true, 0);
        client.Dispose();

        // Either way is a value: a read's Failed result, or OnClosed when the loop saw the error event first.
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => (peer.Failure ?? peer.Closed) is not null), "the loop saw the reset");
        Assert.Equal(LoopErrorKind.Reset, (await harness.OnLoopAsync(() => peer.Failure ?? peer.Closed))!.Value.Kind);
        Assert.True(await harness.OnLoopAsync(() => peer.Socket!.IsClosed));
    }

    [Fact]
    public async Task Reset_makes_the_peer_see_a_reset_not_an_end_of_stream()
    {
        using var harness = new LoopHarness();
        var peer = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");

        await harness.OnLoopAsync(() => peer.Socket!.Reset());

        var refused = await Assert.ThrowsAsync<SocketException>(() => LoopHarness.ReadToEndAsync(client));
        Assert.Equal(SocketError.ConnectionReset, refused.SocketErrorCode);
    }

    [Fact]
    public async Task A_connect_to_a_closed_port_ends_with_refused()
    {
        using var harness = new LoopHarness();
        using Socket vacant = LoopHarness.Listening();
        var endPoint = (System.Net.IPEndPoint)vacant.LocalEndPoint!;
        vacant.Dispose();
        var peer = new ScriptedPeer(harness);

        await harness.OnLoopAsync(() => peer.Socket = LoopSocket.Connect(harness.Loop, endPoint, peer, out _));

        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Closed is not null), "the connect failed");
        Assert.Equal(LoopErrorKind.Refused, (await harness.OnLoopAsync(() => peer.Closed))!.Value.Kind);
        Assert.False(await harness.OnLoopAsync(() => peer.Connected));
    }

    [Fact]
    public async Task A_connect_that_the_peer_resets_before_the_loop_sees_it_complete_is_connected_then_reset()
    {
        using var harness = new LoopHarness();
        using Socket listening = LoopHarness.Listening();
        var peer = new ScriptedPeer(harness);

        // One turn of the loop: the connect starts, the peer takes it (loopback completes the handshake at once) and
        // resets it, so the loop's first look at the socket finds the reset where it looks for the connect's end.
        await harness.OnLoopAsync(() =>
        {
            peer.Socket = LoopSocket.Connect(harness.Loop, (System.Net.IPEndPoint)listening.LocalEndPoint!, peer, out _);
            using Socket accepted = listening.Accept();
            accepted.LingerState = new LingerOption(true, 0);
            accepted.Close();
        });

        // Connected, then broken (a target that broke the connection), never a connect that failed (one it could not reach).
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => (peer.Failure ?? peer.Closed) is not null), "the loop saw the reset");
        Assert.True(await harness.OnLoopAsync(() => peer.Connected));
        Assert.Equal(LoopErrorKind.Reset, (await harness.OnLoopAsync(() => peer.Failure ?? peer.Closed))!.Value.Kind);
    }

    [Fact]
    public async Task Stopping_the_loop_closes_its_open_sockets_and_tells_their_owners()
    {
        var harness = new LoopHarness();
        EchoServer server = await EchoServer.StartAsync(harness);
        Socket[] clients = await Task.WhenAll(Enumerable.Range(0, 10).Select(_ => LoopHarness.ConnectAsync(server.Port)));
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => server.Accepted == 10), "the loop accepted every client");

        harness.Dispose();

        Assert.Equal(10, server.Closed.Count(reason => reason.Kind == LoopErrorKind.LoopStopped));
        foreach (Socket client in clients)
        {
            // The descriptor is closed: the client reads the end of the stream.
            Assert.Empty(await LoopHarness.ReadToEndAsync(client));
            client.Dispose();
        }
    }
}
