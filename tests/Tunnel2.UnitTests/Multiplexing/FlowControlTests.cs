using System.Buffers;
using System.IO.Pipelines;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>Per-stream credit windows: a sender stops at the window and resumes once the receiver consumes half of it.</summary>
public sealed class FlowControlTests
{
    private const int Window = 64 * 1024;

    [Fact]
    public async Task A_sender_blocks_at_the_window_and_resumes_once_half_of_it_is_consumed()
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { InitialStreamWindow = Window });
        UplinkStream server = pair.Server.OpenStream(new RequestHead("POST", "/x", []), endStream: false);

        int granted = await server.AcquireSendCreditAsync(Window, CancellationToken.None);
        Assert.Equal(Window, granted);
        byte[] pooled = ArrayPool<byte>.Shared.Rent(Window);
        server.SendPooledData(pooled, Window, endStream: false);

        // The window is spent: a probe that may not wait is refused, and a real acquire waits.
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await server.AcquireSendCreditAsync(1, new CancellationToken(canceled: true)));
        Task<int> pending = server.AcquireSendCreditAsync(Window, CancellationToken.None).AsTask();
        Assert.False(pending.IsCompleted);

        UplinkStream client = await pair.Handler.NextAsync();
        await ReadAtLeastAsync(client.Input, Window);

        // A quarter of the window consumed: below the half-window batch, nothing is granted yet.
        Consume(client, Window / 4);
        await BarrierAsync(pair);
        Assert.False(pending.IsCompleted);
        Assert.NotSame(pending, await Task.WhenAny(pending, Task.Delay(TimeSpan.FromMilliseconds(100))));

        // Half the window consumed: one WindowUpdate of exactly that much, and the sender resumes.
        Consume(client, Window / 4);
        Assert.Equal(Window / 2, await pending.WithTimeout());
        Assert.True(pair.Server.IsOpen);
        Assert.True(pair.Client.IsOpen);
    }

    [Fact]
    public async Task A_large_body_flows_through_a_small_window()
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { InitialStreamWindow = 16 * 1024, MaxFramePayload = 16 * 1024 });
        byte[] body = StreamExchangeTests.Pattern(1_000_000, seed: 9);

        UplinkStream server = pair.Server.OpenStream(new RequestHead("POST", "/big", []), endStream: false);
        Task send = server.SendBodyAsync(new MemoryStream(body), CancellationToken.None);
        UplinkStream client = await pair.Handler.NextAsync();

        Assert.Equal(body, await client.ReadAllAsync());
        await send.WithTimeout();
    }

    [Fact]
    public async Task A_slow_reader_stalls_only_its_own_stream()
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { InitialStreamWindow = Window });
        UplinkStream stalled = pair.Server.OpenStream(new RequestHead("POST", "/slow", []), endStream: false);
        Task stalledSend = stalled.SendBodyAsync(new MemoryStream(new byte[Window * 4]), CancellationToken.None);
        await pair.Handler.NextAsync(); // never read

        byte[] body = StreamExchangeTests.Pattern(Window * 4, seed: 5);
        UplinkStream flowing = pair.Server.OpenStream(new RequestHead("POST", "/fast", []), endStream: false);
        Task flowingSend = flowing.SendBodyAsync(new MemoryStream(body), CancellationToken.None);
        UplinkStream flowingClient = await pair.Handler.NextAsync();

        Assert.Equal(body, await flowingClient.ReadAllAsync());
        await flowingSend.WithTimeout();
        Assert.False(stalledSend.IsCompleted);
    }

    [Fact]
    public async Task A_receiver_grants_in_half_window_batches_and_not_before()
    {
        await using var peer = RawPeer.ForClient(new UplinkSettings { InitialStreamWindow = Window });
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        await peer.SendFrameAsync(FrameType.Data, 1, new byte[Window]);
        UplinkStream stream = await peer.Handler!.NextAsync();
        await ReadAtLeastAsync(stream.Input, Window);

        Consume(stream, (Window / 2) - 1);
        Assert.DoesNotContain(await peer.PingRoundTripAsync(), f => f.Header.Type == FrameType.WindowUpdate);

        Consume(stream, 1);
        List<ReceivedFrame> frames = await peer.PingRoundTripAsync();

        ReceivedFrame update = Assert.Single(frames, f => f.Header.Type == FrameType.WindowUpdate);
        Assert.Equal(1u, update.Header.StreamId);
        Assert.Equal((uint)(Window / 2), System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(update.Payload));
    }

    [Fact]
    public async Task Data_beyond_the_window_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForClient(new UplinkSettings { InitialStreamWindow = Window });
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        await peer.SendFrameAsync(FrameType.Data, 1, new byte[Window]);
        Assert.True(peer.Uplink.IsOpen);

        await peer.SendFrameAsync(FrameType.Data, 1, [1]);

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Granted_window_lets_the_peer_send_more()
    {
        await using var peer = RawPeer.ForClient(new UplinkSettings { InitialStreamWindow = Window });
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        await peer.SendFrameAsync(FrameType.Data, 1, new byte[Window]);
        UplinkStream stream = await peer.Handler!.NextAsync();
        await ReadAtLeastAsync(stream.Input, Window);
        Consume(stream, Window / 2);
        await peer.PingRoundTripAsync();

        await peer.SendFrameAsync(FrameType.Data, 1, new byte[Window / 2]);
        await peer.PingRoundTripAsync();

        Assert.True(peer.Uplink.IsOpen);
    }

    [Theory]
    [InlineData(0u)]
    [InlineData(0x80000000u)]
    [InlineData(uint.MaxValue)]
    public async Task A_window_increment_outside_1_to_2_pow_31_minus_1_is_a_protocol_error(uint increment)
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStream(new RequestHead("POST", "/", []), endStream: false);

        await peer.SendFrameAsync(FrameType.WindowUpdate, 1, FrameBytes.U32(increment));

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_window_grown_beyond_2_pow_31_minus_1_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStream(new RequestHead("POST", "/", []), endStream: false);

        await peer.SendFrameAsync(FrameType.WindowUpdate, 1, FrameBytes.U32(int.MaxValue));

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_peer_window_update_wakes_a_waiting_sender()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { InitialStreamWindow = Window });
        UplinkStream stream = peer.Uplink.OpenStream(new RequestHead("POST", "/", []), endStream: false);
        Assert.Equal(Window, await stream.AcquireSendCreditAsync(int.MaxValue, CancellationToken.None));
        Task<int> pending = stream.AcquireSendCreditAsync(100_000, CancellationToken.None).AsTask();

        await peer.SendFrameAsync(FrameType.WindowUpdate, 1, FrameBytes.U32(1234));

        Assert.Equal(1234, await pending.WithTimeout());
    }

    [Fact]
    public async Task Unused_credit_given_back_can_be_acquired_again()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { InitialStreamWindow = Window });
        UplinkStream stream = peer.Uplink.OpenStream(new RequestHead("POST", "/", []), endStream: false);

        Assert.Equal(Window, await stream.AcquireSendCreditAsync(Window, CancellationToken.None));
        stream.ReturnSendCredit(1000);
        stream.ReturnSendCredit(0);
        stream.ReturnSendCredit(-5);

        Assert.Equal(1000, await stream.AcquireSendCreditAsync(Window, CancellationToken.None));
    }

    [Fact]
    public async Task A_waiting_sender_can_be_cancelled()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { InitialStreamWindow = Window });
        UplinkStream stream = peer.Uplink.OpenStream(new RequestHead("POST", "/", []), endStream: false);
        await stream.AcquireSendCreditAsync(Window, CancellationToken.None);
        using var cancel = new CancellationTokenSource();
        Task<int> pending = stream.AcquireSendCreditAsync(1, cancel.Token).AsTask();

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pending.WithTimeout());
    }

    private static async Task ReadAtLeastAsync(PipeReader input, long bytes)
    {
        using var timeout = new CancellationTokenSource(TestTimeouts.Default);
        while (true)
        {
            ReadResult result = await input.ReadAsync(timeout.Token);
            if (result.Buffer.Length >= bytes)
            {
                input.AdvanceTo(result.Buffer.Start);
                return;
            }

            Assert.False(result.IsCompleted);
            input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
    }

    /// <summary>Consumes bytes the test already knows are buffered, and reports them.</summary>
    private static void Consume(UplinkStream stream, int bytes)
    {
        Assert.True(stream.Input.TryRead(out ReadResult result));
        Assert.True(result.Buffer.Length >= bytes);
        stream.Input.AdvanceTo(result.Buffer.GetPosition(bytes));
        stream.OnInputConsumed(bytes);
    }

    /// <summary>
    /// Every frame the client queued before this returns has been handled by the server: a fresh exchange whose
    /// response head follows them on the same ordered connection.
    /// </summary>
    private static async Task BarrierAsync(UplinkPair pair)
    {
        UplinkStream server = pair.Server.OpenStream(new RequestHead("GET", "/barrier", []), endStream: true);
        UplinkStream client = await pair.Handler.NextAsync();
        client.SendResponseHead(new ResponseHead(204, []), endStream: true);
        await server.ReadResponseHeadAsync().WithTimeout();
    }
}
