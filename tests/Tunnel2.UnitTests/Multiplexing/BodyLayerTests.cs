using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Http1;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>The one body layer, seen on the wire: Data frames as large as credit allows, the end folded into the last one.</summary>
public sealed class BodyLayerTests
{
    private static readonly RequestHead Post = new("POST", "/upload", []);

    [Fact]
    public async Task A_body_whose_end_is_known_goes_out_with_END_STREAM_on_its_last_data_frame_and_no_empty_frame()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        byte[] body = Encoding.ASCII.GetBytes(new string('b', UplinkSettings.DefaultInitialStreamWindow));

        var source = new Pipe();
        await source.Writer.WriteAsync(body);
        await source.Writer.CompleteAsync(); // the read sees the last bytes and the end together, as with a Content-Length body

        await stream.SendBodyAsync(source.Reader, CancellationToken.None).WithTimeout();

        (ReceivedFrame last, List<ReceivedFrame> before) = await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data && f.Header.EndStream);
        List<ReceivedFrame> data = [.. before.FindAll(f => f.Header.Type == FrameType.Data), last];
        Assert.Equal(body, data.SelectMany(f => f.Payload).ToArray());
        Assert.True(data[^1].Header.EndStream);
        Assert.DoesNotContain(data, f => f.Payload.Length == 0);
        Assert.All(data[..^1], f => Assert.False(f.Header.EndStream));
    }

    [Fact]
    public async Task Sending_a_sequence_waits_for_credit_and_cuts_frames_no_larger_than_it()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        int window = UplinkSettings.DefaultInitialStreamWindow;
        var data = new ReadOnlySequence<byte>(new byte[window + 100]);

        Task sending = stream.SendAsync(data, endStream: true, CancellationToken.None).AsTask();

        int received = 0;
        while (received < window)
        {
            ReceivedFrame frame = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data)).Match;
            Assert.False(frame.Header.EndStream);
            received += frame.Payload.Length;
        }

        Assert.Equal(window, received);
        Assert.False(sending.IsCompleted); // the last 100 bytes need credit the peer has not granted

        await peer.SendFrameAsync(FrameType.WindowUpdate, stream.Id, FrameBytes.U32(1000));
        await sending.WithTimeout();
        ReceivedFrame last = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data)).Match;
        Assert.Equal(100, last.Payload.Length);
        Assert.True(last.Header.EndStream);
    }

    [Fact]
    public async Task A_frame_filled_from_a_source_returns_the_credit_it_did_not_use()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);

        int sent = await stream.SendFrameAsync(
            static (destination, _, _) => { destination.Span[..3].Fill((byte)'x'); return ValueTask.FromResult(3); },
            static (_, _) => ValueTask.CompletedTask,
            0,
            limit: 3,
            endAtLimit: true,
            CancellationToken.None);
        int ended = await stream.SendFrameAsync(static (_, _, _) => ValueTask.FromResult(0), static (_, _) => ValueTask.CompletedTask, 0, limit: 10, endAtLimit: false, CancellationToken.None);

        Assert.Equal(3, sent);
        Assert.Equal(0, ended);
        ReceivedFrame frame = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data)).Match;
        Assert.Equal("xxx"u8.ToArray(), frame.Payload);
        Assert.True(frame.Header.EndStream);
        Assert.True(stream.HasSendCredit);
    }

    [Fact]
    public async Task With_the_uplinks_read_ahead_budget_full_a_frame_waits_for_its_source_then_for_room_before_it_reads()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { QueuedDataLimit = 1000 });
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        QueuedDataBudget budget = peer.Uplink.Scheduler.DataBudget;
        await budget.ReserveAsync(1000, light: false, CancellationToken.None); // another stream's frames fill it
        var sourceHasData = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var waitedForData = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int fills = 0;

        Task<int> sending = stream.SendFrameAsync(
            (destination, _, _) => { Interlocked.Increment(ref fills); destination.Span[..5].Fill((byte)'x'); return ValueTask.FromResult(5); },
            (_, _) => { waitedForData.TrySetResult(); return new ValueTask(sourceHasData.Task); },
            0,
            limit: 100_000,
            endAtLimit: false,
            CancellationToken.None).AsTask();

        await waitedForData.Task.WithTimeout();
        sourceHasData.SetResult();
        await Eventually.WaitUntilAsync(() => budget.Waiting == 1, "the frame waits its turn in the budget");
        Assert.Equal(0, Volatile.Read(ref fills));

        budget.Release(1000);

        Assert.Equal(5, await sending.WithTimeout());
        Assert.Equal(1, fills);
        ReceivedFrame frame = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data)).Match;
        Assert.Equal("xxxxx"u8.ToArray(), frame.Payload);
        await Eventually.WaitUntilAsync(() => budget.Reserved == 0, "the writer took the frame and gave its room back");
    }

    [Fact]
    public async Task A_whole_small_answer_is_not_held_back_by_a_full_read_ahead_budget()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { QueuedDataLimit = 1000 });
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        await peer.Uplink.Scheduler.DataBudget.ReserveAsync(1000, light: false, CancellationToken.None);

        int sent = await stream.SendFrameAsync(
            static (destination, _, _) => { destination.Span[..4].Fill((byte)'p'); return ValueTask.FromResult(4); },
            static (_, _) => throw new InvalidOperationException("a small last frame does not wait"),
            0,
            limit: 4,
            endAtLimit: true,
            CancellationToken.None).AsTask().WithTimeout();

        Assert.Equal(4, sent);
        ReceivedFrame frame = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data)).Match;
        Assert.True(frame.Header.EndStream);
    }

    [Theory]
    [InlineData(1, "1\r\n")]
    [InlineData(255, "FF\r\n")]
    [InlineData(65536, "10000\r\n")]
    public void A_chunk_starts_with_its_size_in_hex(long length, string expected)
    {
        var output = new ArrayBufferWriter<byte>();

        ChunkedEncoding.WriteChunkStart(output, length);

        Assert.Equal(expected, Encoding.ASCII.GetString(output.WrittenSpan));
    }
}
