using System.Net.Sockets;
using System.Security.Cryptography;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

public sealed class LoopSocketBackpressureTests
{
    [Fact]
    public async Task Gather_sends_deliver_every_header_and_payload_in_order()
    {
        using var harness = new LoopHarness();
        const int Frames = 500;
        FramePump pump = await FramePump.StartAsync(harness, Frames, LoopSocket.DefaultWindow);
        using Socket client = await LoopHarness.ConnectAsync(pump.Port);

        byte[] received = await LoopHarness.ReadToEndAsync(client);

        Assert.Equal(SHA256.HashData(FramePump.Expected(Frames)), SHA256.HashData(received));
        Assert.Empty(await harness.OnLoopAsync(() => pump.Unexpected.ToList()));
    }

    [Fact]
    public async Task A_slow_reader_bounds_the_queue_the_writer_is_told_to_stop_then_to_go_on()
    {
        using var harness = new LoopHarness();
        const int Frames = 2_000, Window = 64 * 1024;   // ~40 MB: more than the kernel's buffers take
        FramePump pump = await FramePump.StartAsync(harness, Frames, Window);
        using Socket client = await LoopHarness.ConnectAsync(pump.Port);

        // The client reads nothing yet: the kernel's buffers fill, then the socket's queue, then the pump is stopped.
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => pump.FullCount > 0), "the writer was told to stop");
        (int sent, int maxQueued, SendStatus pushed) = await harness.OnLoopAsync(
            () => (pump.Sent, pump.MaxQueued, pump.Socket!.Send(new byte[1000])));
        Assert.True(sent < Frames, "the pump stopped before its end");
        Assert.InRange(maxQueued, Window, Window + 8 + FramePump.MaxPayload);
        Assert.Equal(SendStatus.Refused, pushed);

        byte[] received = await LoopHarness.ReadToEndAsync(client);

        Assert.Equal(SHA256.HashData(FramePump.Expected(Frames)), SHA256.HashData(received));
        Assert.Empty(await harness.OnLoopAsync(() => pump.Unexpected.ToList()));
    }

    [Fact]
    public async Task SendSome_takes_only_what_the_kernel_takes_and_OnWritable_follows_once_it_can_take_more()
    {
        using var harness = new LoopHarness();
        ScriptedPeer peer = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");
        byte[] chunk = new byte[64 * 1024];

        // The client reads nothing yet: SendSome takes whole chunks until the kernel's buffers are full, then less.
        (long taken, int queued, int writable) = await harness.OnLoopAsync(() =>
        {
            long sum = 0;
            int n;
            while ((n = peer.Socket!.SendSome(chunk)) == chunk.Length)
            {
                sum += n;
            }
            return (sum + n, peer.Socket.QueuedBytes, peer.Writable);
        });
        Assert.Equal(0, queued);
        Assert.Equal(0, writable);

        byte[] buffer = new byte[64 * 1024];
        for (long read = 0; read < taken;)
        {
            read += await client.ReceiveAsync(buffer.AsMemory()).AsTask().WaitAsync(LoopHarness.Timeout);
        }
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Writable == 1), "OnWritable followed");
    }

    [Fact]
    public async Task NotifyWhenDrained_on_an_empty_queue_calls_OnWritable_on_the_next_turn()
    {
        using var harness = new LoopHarness();
        ScriptedPeer peer = await ScriptedPeer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(peer.Port);
        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Socket is not null), "the loop accepted");

        Assert.Equal(0, await harness.OnLoopAsync(() => { peer.Socket!.NotifyWhenDrained(); return peer.Writable; }));

        await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => peer.Writable == 1), "OnWritable followed");
    }
}
