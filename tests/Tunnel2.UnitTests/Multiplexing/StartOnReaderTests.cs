using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// The client's reader lets its handler start a stream on the reader's thread only for a whole request (no body) that
/// is the last frame of its batch: one per batch, so the others still go to the thread pool.
/// </summary>
public sealed class StartOnReaderTests
{
    [Fact]
    public async Task Only_a_whole_request_that_ends_the_batch_may_start_on_the_reader()
    {
        var seen = new List<(uint Id, bool MayStart)>();
        var handler = new RecordingStreamHandler { OnOpened = stream => { lock (seen) { seen.Add((stream.Id, stream.MayStartOnReader)); } } };
        await using var peer = RawPeer.ForClient(handler: handler);

        // One batch: two whole GETs; then a batch of its own: a POST whose body follows.
        await peer.SendAsync([
            .. FrameBytes.Frame(FrameType.RequestHead, FrameFlags.EndStream, 1, FrameBytes.Encode(new RequestHead("GET", "/1", []))),
            .. FrameBytes.Frame(FrameType.RequestHead, FrameFlags.EndStream, 2, FrameBytes.Encode(new RequestHead("GET", "/2", [])))]);
        await handler.NextAsync();
        await handler.NextAsync();
        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.None, 3, FrameBytes.Encode(new RequestHead("POST", "/3", [])));
        UplinkStream post = await handler.NextAsync();

        lock (seen)
        {
            Assert.Equal([(1u, false), (2u, true), (3u, false)], seen);
        }

        // Outside the handler's call it is never set.
        Assert.False(post.MayStartOnReader);
    }
}
