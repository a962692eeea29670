using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// The body layer for an owner on an event loop (the client's backend bodies on its loop): one read into several frames'
/// buffers under credit and budget taken without waiting, queued as Data frames; whatever is not sent goes back.
/// </summary>
public sealed class SendFramesNowTests
{
    private const int Chunk = 16 * 1024;
    private const int Window = 4 * Chunk;
    private static readonly UplinkSettings SmallFrames = new() { MaxFramePayload = Chunk, InitialStreamWindow = Window };
    private static readonly RequestHead Post = new("POST", "/upload", []);

    [Fact]
    public async Task One_read_fills_several_frames_and_the_last_ends_the_stream_at_the_limit()
    {
        await using var peer = RawPeer.ForServer(SmallFrames);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        var source = new Source(StreamExchangeTests.Pattern(40_000, seed: 3));

        SendNowStatus status = stream.TrySendFramesNow(Source.Fill, source, limit: 40_000, endAtLimit: true, maxFrames: 4, out int sent);

        Assert.Equal(SendNowStatus.Sent, status);
        Assert.Equal(40_000, sent);
        Assert.Equal([Chunk, Chunk, 40_000 - 2 * Chunk], Assert.Single(source.Offered));
        (ReceivedFrame last, List<ReceivedFrame> before) = await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Data && f.Header.EndStream);
        List<ReceivedFrame> data = [.. before.Where(f => f.Header.Type == FrameType.Data), last];
        Assert.Equal([Chunk, Chunk, 40_000 - 2 * Chunk], data.Select(f => f.Payload.Length));
        Assert.Equal(source.Data, data.SelectMany(f => f.Payload).ToArray());
    }

    [Fact]
    public async Task A_short_read_sends_what_it_read_and_gives_the_rest_of_the_credit_back()
    {
        await using var peer = RawPeer.ForServer(SmallFrames);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        var source = new Source(StreamExchangeTests.Pattern(200_000, seed: 4)) { MaxPerRead = 40_000 };

        Assert.Equal(SendNowStatus.Sent, stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out int first));
        source.MaxPerRead = int.MaxValue;
        Assert.Equal(SendNowStatus.Sent, stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out int second));

        Assert.Equal(40_000, first);
        Assert.Equal(Window - 40_000, second); // the credit the short read did not use
        Assert.Equal([Chunk, Chunk, Chunk, Chunk], source.Offered[0]);
    }

    [Fact]
    public async Task Nothing_to_read_sends_nothing_and_keeps_the_window_whole()
    {
        await using var peer = RawPeer.ForServer(SmallFrames);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        var source = new Source(StreamExchangeTests.Pattern(Window, seed: 5)) { Empty = true };

        Assert.Equal(SendNowStatus.WouldBlock, stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out int none));
        Assert.Equal(0, none);
        Assert.Equal(0, peer.Uplink.Scheduler.DataBudget.Reserved);

        source.Empty = false;
        Assert.Equal(SendNowStatus.Sent, stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out int sent));
        Assert.Equal(Window, sent);
    }

    [Fact]
    public async Task Without_credit_it_reads_nothing_and_says_so()
    {
        await using var peer = RawPeer.ForServer(SmallFrames);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        var source = new Source(StreamExchangeTests.Pattern(2 * Window, seed: 6));
        Assert.Equal(SendNowStatus.Sent, stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out _));

        SendNowStatus status = stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out int sent);

        Assert.Equal(SendNowStatus.NoCredit, status);
        Assert.Equal(0, sent);
        Assert.Single(source.Offered);
    }

    [Fact]
    public async Task The_sources_end_is_Ended_and_a_failed_read_gives_everything_back()
    {
        await using var peer = RawPeer.ForServer(SmallFrames);
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(Post, endStream: false);
        var source = new Source([]) { Failure = new IOException("the backend connection failed") };

        Assert.Throws<IOException>(() => stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out _));
        source.Failure = null;
        Assert.Equal(SendNowStatus.Ended, stream.TrySendFramesNow(Source.Fill, source, long.MaxValue, endAtLimit: false, maxFrames: 4, out _));

        Assert.Equal(0, peer.Uplink.Scheduler.DataBudget.Reserved);
        Assert.Equal(Window, stream.TryTakeSendCredit(int.MaxValue));
    }

    /// <summary>A source that copies its bytes into the offered buffers in order, recording each read's buffer sizes.</summary>
    private sealed class Source(byte[] data)
    {
        public static readonly ScatterFill<Source> Fill = static (buffers, source) => source.Read(buffers);

        public byte[] Data { get; } = data;

        public List<int[]> Offered { get; } = [];

        public int MaxPerRead { get; set; } = int.MaxValue;

        public bool Empty { get; set; }

        public Exception? Failure { get; set; }

        private int _offset;

        private int Read(ReadOnlySpan<Memory<byte>> buffers)
        {
            Offered.Add([.. buffers.ToArray().Select(b => b.Length)]);
            if (Failure is not null)
            {
                throw Failure;
            }

            if (Empty)
            {
                return -1;
            }

            int read = 0;
            foreach (Memory<byte> buffer in buffers)
            {
                int n = Math.Min(buffer.Length, Math.Min(Data.Length - _offset, MaxPerRead - read));
                Data.AsSpan(_offset, n).CopyTo(buffer.Span);
                _offset += n;
                read += n;
            }

            return read;
        }
    }
}
