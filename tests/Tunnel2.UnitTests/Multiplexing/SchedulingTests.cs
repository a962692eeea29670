using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// The order in which the uplink's writer sends what its streams queued: heads and control frames first, a small
/// answer ahead of bulk backlogs, bulk streams in turn. The test plays the server and reads nothing until the streams
/// have queued, so the writer is held up by the transport exactly as behind a slow socket.
/// </summary>
public sealed class SchedulingTests
{
    private const int Frame = 64 * 1024;

    [Fact]
    public async Task A_small_answer_overtakes_a_bulk_backlog_queued_before_it()
    {
        await using var peer = RawPeer.ForClient();
        UplinkStream bulk = await OpenAsync(peer, 1);
        UplinkStream small = await OpenAsync(peer, 3);

        bulk.SendResponseHead(new ResponseHead(200, []), endStream: false);
        for (int i = 0; i < 6; i++)
        {
            SendData(bulk, Frame, (byte)'b');
        }

        small.SendResponseHead(new ResponseHead(200, []), endStream: false);
        SendData(small, 4, (byte)'s');
        small.SendEnd();

        List<ReceivedFrame> frames = await ReadDataFramesAsync(peer, count: 6 + 2);
        int smallEnd = frames.FindIndex(f => f.Header.StreamId == 3 && f.Header.EndStream);
        int lastBulk = frames.FindLastIndex(f => f.Header.StreamId == 1);
        Assert.True(smallEnd < lastBulk, $"the small answer ended at frame {smallEnd}, after the bulk backlog (last bulk frame {lastBulk})");
    }

    [Fact]
    public async Task Bulk_streams_take_turns_instead_of_one_draining_first()
    {
        await using var peer = RawPeer.ForClient();
        UplinkStream first = await OpenAsync(peer, 1);
        UplinkStream second = await OpenAsync(peer, 3);
        first.SendResponseHead(new ResponseHead(200, []), endStream: false);
        second.SendResponseHead(new ResponseHead(200, []), endStream: false);
        for (int i = 0; i < 6; i++)
        {
            SendData(first, Frame, (byte)'1');
        }

        for (int i = 0; i < 6; i++)
        {
            SendData(second, Frame, (byte)'2');
        }

        List<ReceivedFrame> frames = await ReadDataFramesAsync(peer, count: 12);
        int firstOfSecond = frames.FindIndex(f => f.Header.StreamId == 3);
        int lastOfFirst = frames.FindLastIndex(f => f.Header.StreamId == 1);
        Assert.True(firstOfSecond < lastOfFirst, "the second stream waited until the first had sent its whole backlog");
    }

    [Fact]
    public async Task Each_stream_keeps_its_head_before_its_data_and_its_data_in_order()
    {
        await using var peer = RawPeer.ForClient();
        var streams = new List<UplinkStream>();
        for (uint id = 1; id <= 9; id += 2)
        {
            streams.Add(await OpenAsync(peer, id));
        }

        foreach (UplinkStream stream in streams)
        {
            stream.SendResponseHead(new ResponseHead(200, []), endStream: false);
            for (int i = 0; i < 3; i++)
            {
                SendData(stream, 40_000, (byte)i);
            }

            stream.SendEnd();
        }

        var seenHead = new HashSet<uint>();
        var nextChunk = new Dictionary<uint, int>();
        int ended = 0;
        while (ended < streams.Count)
        {
            ReceivedFrame frame = (await peer.ReadFrameAsync())!;
            uint id = frame.Header.StreamId;
            if (frame.Header.Type == FrameType.ResponseHead)
            {
                Assert.True(seenHead.Add(id));
                continue;
            }

            Assert.Equal(FrameType.Data, frame.Header.Type);
            Assert.Contains(id, seenHead);
            if (frame.Header.EndStream)
            {
                Assert.Equal(3, nextChunk.GetValueOrDefault(id));
                ended++;
                continue;
            }

            int chunk = nextChunk.GetValueOrDefault(id);
            Assert.Equal((byte)chunk, frame.Payload[0]);
            nextChunk[id] = chunk + 1;
        }
    }

    [Fact]
    public async Task A_reset_after_a_complete_answer_follows_the_answer()
    {
        await using var peer = RawPeer.ForClient();
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        UplinkStream stream = await peer.Handler!.NextAsync();

        // An answer that comes before the whole request body (the backend did not wait for it), then the relay ends.
        stream.SendResponseHead(new ResponseHead(200, []), endStream: false);
        SendData(stream, Frame, (byte)'a');
        SendData(stream, Frame, (byte)'a');
        stream.SendEnd();
        stream.Dispose();

        (ReceivedFrame reset, List<ReceivedFrame> before) = await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset);
        Assert.Equal(1u, reset.Header.StreamId);
        Assert.Equal(2 * Frame, before.Where(f => f.Header.Type == FrameType.Data).Sum(f => f.Payload.Length));
        Assert.Contains(before, f => f.Header.Type == FrameType.Data && f.Header.EndStream);
    }

    [Fact]
    public async Task Pings_from_a_peer_that_does_not_read_the_answers_close_the_uplink()
    {
        await using var peer = RawPeer.ForClient();
        UplinkStream stream = await OpenAsync(peer, 1);
        stream.SendResponseHead(new ResponseHead(200, []), endStream: false);
        for (int i = 0; i < 4; i++)
        {
            SendData(stream, Frame, (byte)'x'); // fills the transport the test never reads: the writer stalls
        }

        for (int i = 0; i < Uplink.MaxQueuedPongs * 4; i++)
        {
            await peer.SendFrameAsync(FrameType.Ping, 0, FrameBytes.U64((ulong)i + 1));
        }

        string reason = await peer.WaitClosedAsync();
        Assert.Contains("Ping flood", reason, StringComparison.Ordinal);
    }

    private static async Task<UplinkStream> OpenAsync(RawPeer peer, uint id)
    {
        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, id, FrameBytes.Encode(new RequestHead("GET", "/", [])));
        return await peer.Handler!.NextAsync();
    }

    private static void SendData(UplinkStream stream, int length, byte fill)
    {
        byte[] pooled = ArrayPool<byte>.Shared.Rent(length);
        pooled.AsSpan(0, length).Fill(fill);
        stream.SendPooledData(pooled, length, endStream: false);
    }

    private static async Task<List<ReceivedFrame>> ReadDataFramesAsync(RawPeer peer, int count)
    {
        var frames = new List<ReceivedFrame>();
        while (frames.Count < count)
        {
            ReceivedFrame frame = (await peer.ReadFrameAsync())!;
            if (frame.Header.Type == FrameType.Data)
            {
                frames.Add(frame);
            }
        }

        return frames;
    }
}
