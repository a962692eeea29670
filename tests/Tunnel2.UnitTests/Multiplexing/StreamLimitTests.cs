using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>The server keeps to the negotiated stream limit instead of letting the client kill the uplink.</summary>
public sealed class StreamLimitTests
{
    private static readonly RequestHead Get = new("GET", "/", []);

    [Fact]
    public async Task The_server_refuses_a_stream_over_the_limit_and_the_uplink_stays_up()
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { MaxConcurrentStreams = 2 });
        (UplinkStream first, UplinkStream firstOnClient) = await pair.OpenAsync(Get, endStream: true);
        await pair.OpenAsync(Get, endStream: true);

        Assert.Equal(StreamOpenStatus.AtStreamLimit, pair.Server.TryOpenStream(Get, endStream: true, out UplinkStream? refused));

        Assert.Null(refused);
        Assert.Equal(2, pair.Server.ActiveStreamCount);
        Assert.True(pair.Server.IsOpen);
        Assert.True(pair.Client.IsOpen);

        // Once one exchange is over, there is room again.
        firstOnClient.SendResponseHead(new ResponseHead(204, []), endStream: true);
        Assert.Equal(204, (await first.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        first.Dispose();
        firstOnClient.Dispose();
        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == 1, "the finished stream is forgotten");
        (UplinkStream third, _) = await pair.OpenAsync(Get, endStream: true);
        Assert.Equal(3u, third.Id);
        Assert.True(pair.Client.IsOpen);
    }

    [Fact]
    public async Task Try_open_reports_the_limit_a_closed_uplink_and_a_head_too_large_without_throwing()
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { MaxConcurrentStreams = 1 });
        await pair.OpenAsync(Get, endStream: true);

        Assert.Equal(StreamOpenStatus.AtStreamLimit, pair.Server.TryOpenStream(Get, endStream: true, out UplinkStream? atLimit));
        Assert.Null(atLimit);
        Assert.False(pair.Server.HasRoomForStream);
        Assert.True(pair.Server.AcceptsNewStreams);

        var huge = new RequestHead("GET", "/", [new("X-Big", new string('x', 20_000))]);
        await using var roomy = UplinkPair.Start(new UplinkSettings { MaxFramePayload = 16 * 1024 });
        Assert.Equal(StreamOpenStatus.HeadTooLarge, roomy.Server.TryOpenStream(huge, endStream: true, out UplinkStream? tooLarge));
        Assert.Null(tooLarge);
        Assert.Equal(0, roomy.Server.ActiveStreamCount);

        roomy.Server.Close("test");
        Assert.Equal(StreamOpenStatus.UplinkClosed, roomy.Server.TryOpenStream(Get, endStream: true, out UplinkStream? closed));
        Assert.Null(closed);
    }

    [Fact]
    public async Task A_client_that_still_holds_the_limit_refuses_one_more_with_overloaded_instead_of_closing()
    {
        await using var peer = RawPeer.ForClient(new UplinkSettings { MaxConcurrentStreams = 2 });
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(Get));
        await peer.SendFrameAsync(FrameType.RequestHead, 2, FrameBytes.Encode(Get));

        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, 3, FrameBytes.Encode(Get));

        ReceivedFrame reset = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset)).Match;
        Assert.Equal(3u, reset.Header.StreamId);
        Assert.Equal(FrameBytes.U32((uint)ProtocolErrorCode.Overloaded), reset.Payload);
        Assert.Equal([1u, 2u], peer.Handler!.Ids);
        Assert.True(peer.Uplink.IsOpen);
    }
}
