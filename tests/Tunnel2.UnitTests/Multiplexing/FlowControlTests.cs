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

    /// <summary>Streams that never grow beyond their initial window, so that each grant has an exact expected size.</summary>
    private static readonly UplinkSettings FixedWindow = new() { InitialStreamWindow = Window, MaxStreamWindow = Window };

    [Fact]
    public async Task A_sender_blocks_at_the_window_and_resumes_once_half_of_it_is_consumed()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/x", []), endStream: false);

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
        await pair.BarrierAsync();
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

        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/big", []), endStream: false);
        Task send = server.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
        UplinkStream client = await pair.Handler.NextAsync();

        Assert.Equal(body, await client.ReadAllAsync());
        await send.WithTimeout();
    }

    [Fact]
    public async Task A_slow_reader_stalls_only_its_own_stream()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        UplinkStream stalled = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/slow", []), endStream: false);
        Task stalledSend = stalled.SendBodyAsync(PipeReader.Create(new MemoryStream(new byte[Window * 4])), CancellationToken.None);
        await pair.Handler.NextAsync(); // never read

        byte[] body = StreamExchangeTests.Pattern(Window * 4, seed: 5);
        UplinkStream flowing = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/fast", []), endStream: false);
        Task flowingSend = flowing.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
        UplinkStream flowingClient = await pair.Handler.NextAsync();

        Assert.Equal(body, await flowingClient.ReadAllAsync());
        await flowingSend.WithTimeout();
        Assert.False(stalledSend.IsCompleted);
    }

    [Fact]
    public async Task A_receiver_grants_in_half_window_batches_and_not_before()
    {
        await using var peer = RawPeer.ForClient(FixedWindow);
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
    public async Task A_lone_stream_grows_to_the_largest_stream_window()
    {
        const int initial = 4 * 1024;
        await using var peer = RawPeer.ForClient(new UplinkSettings { InitialStreamWindow = initial, ConnectionWindow = Window * 4, MaxStreamWindow = Window });
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        await peer.SendFrameAsync(FrameType.Data, 1, new byte[initial]);
        UplinkStream stream = await peer.Handler!.NextAsync();
        await ReadAtLeastAsync(stream.Input, initial);

        Consume(stream, initial);

        ReceivedFrame update = Assert.Single(await peer.PingRoundTripAsync(), f => f.Header.Type == FrameType.WindowUpdate);
        Assert.Equal((uint)Window, System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(update.Payload));
        Assert.Equal(Window, peer.Uplink.ReceiveCreditOutstanding);
    }

    [Fact]
    public async Task A_crowd_of_streams_shares_the_connection_window_and_each_keeps_its_initial_window()
    {
        const int initial = 4 * 1024;
        const int connectionWindow = 64 * 1024;
        const int streams = 200;
        await using var peer = RawPeer.ForClient(new UplinkSettings { InitialStreamWindow = initial, ConnectionWindow = connectionWindow, MaxStreamWindow = 1024 * 1024 });
        var opened = new List<UplinkStream>();
        for (uint id = 1; id <= streams * 2; id += 2)
        {
            await peer.SendFrameAsync(FrameType.RequestHead, id, FrameBytes.Encode(new RequestHead("POST", "/", [])));
            await peer.SendFrameAsync(FrameType.Data, id, new byte[initial]);
            UplinkStream stream = await peer.Handler!.NextAsync();
            await ReadAtLeastAsync(stream.Input, initial);

            // Each reader takes its first bytes as soon as they come, while fewer streams are open than will be: the
            // early ones ask for large shares, and the budget, not the share, is what stops them.
            Consume(stream, initial);
            opened.Add(stream);
        }

        var granted = new Dictionary<uint, long>();
        foreach (ReceivedFrame frame in await peer.PingRoundTripAsync())
        {
            if (frame.Header.Type == FrameType.WindowUpdate)
            {
                granted[frame.Header.StreamId] = granted.GetValueOrDefault(frame.Header.StreamId) + System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(frame.Payload);
            }
        }

        Assert.Equal(streams, granted.Count);
        Assert.All(granted.Values, g => Assert.InRange(g, initial, 1024 * 1024));
        long total = 0;
        foreach (long g in granted.Values)
        {
            total += g;
        }

        long budget = connectionWindow + ((long)streams * initial);
        Assert.InRange(total, streams * initial, budget);
        Assert.Equal(total, peer.Uplink.ReceiveCreditOutstanding);
    }

    [Fact]
    public async Task Credit_a_finished_stream_never_used_goes_back_to_the_budget()
    {
        await using var peer = RawPeer.ForClient(FixedWindow);
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        UplinkStream stream = await peer.Handler!.NextAsync();
        Assert.Equal(Window, peer.Uplink.ReceiveCreditOutstanding);

        await peer.SendFrameAsync(FrameType.Data, FrameFlags.EndStream, 1, new byte[100]);
        Assert.Equal(new byte[100], await stream.ReadAllAsync());
        stream.SendResponseHead(new ResponseHead(204, []), endStream: true);

        await Eventually.WaitUntilAsync(() => peer.Uplink.ActiveStreamCount == 0 && peer.Uplink.ReceiveCreditOutstanding == 0, "the stream is gone and holds no credit");
    }

    [Fact]
    public async Task Data_beyond_the_window_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForClient(FixedWindow);
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        await peer.SendFrameAsync(FrameType.Data, 1, new byte[Window]);
        Assert.True(peer.Uplink.IsOpen);

        await peer.SendFrameAsync(FrameType.Data, 1, [1]);

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Granted_window_lets_the_peer_send_more()
    {
        await using var peer = RawPeer.ForClient(FixedWindow);
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
        peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);

        await peer.SendFrameAsync(FrameType.WindowUpdate, 1, FrameBytes.U32(increment));

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_window_grown_beyond_2_pow_31_minus_1_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);

        await peer.SendFrameAsync(FrameType.WindowUpdate, 1, FrameBytes.U32(int.MaxValue));

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_peer_window_update_wakes_a_waiting_sender()
    {
        await using var peer = RawPeer.ForServer(FixedWindow);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);
        Assert.Equal(Window, await stream.AcquireSendCreditAsync(int.MaxValue, CancellationToken.None));
        Task<int> pending = stream.AcquireSendCreditAsync(100_000, CancellationToken.None).AsTask();

        await peer.SendFrameAsync(FrameType.WindowUpdate, 1, FrameBytes.U32(1234));

        Assert.Equal(1234, await pending.WithTimeout());
    }

    [Fact]
    public async Task Unused_credit_given_back_can_be_acquired_again()
    {
        await using var peer = RawPeer.ForServer(FixedWindow);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);

        Assert.Equal(Window, await stream.AcquireSendCreditAsync(Window, CancellationToken.None));
        stream.ReturnSendCredit(1000);
        stream.ReturnSendCredit(0);
        stream.ReturnSendCredit(-5);

        Assert.Equal(1000, await stream.AcquireSendCreditAsync(Window, CancellationToken.None));
    }

    [Fact]
    public async Task A_waiting_sender_can_be_cancelled()
    {
        await using var peer = RawPeer.ForServer(FixedWindow);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);
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
}
