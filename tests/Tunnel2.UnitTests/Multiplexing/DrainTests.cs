using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>GoAway: no new streams, open ones finish.</summary>
public sealed class DrainTests
{
    [Fact]
    public async Task A_draining_server_opens_no_new_streams_but_finishes_open_ones()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);

        pair.Server.BeginDrain();

        Assert.True(pair.Server.IsOpen);
        Assert.False(pair.Server.AcceptsNewStreams);
        Assert.Equal(StreamOpenStatus.UplinkClosed, pair.Server.TryOpenStream(new RequestHead("GET", "/", []), endStream: true, out _));
        await Eventually.WaitUntilAsync(() => !pair.Client.AcceptsNewStreams, "the client hears the GoAway");
        Assert.True(pair.Client.IsOpen);

        client.SendResponseHead(new ResponseHead(200, []), endStream: true);
        Assert.Equal(200, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
    }

    [Fact]
    public async Task When_the_client_drains_the_server_stops_opening_streams_on_it()
    {
        await using var pair = UplinkPair.Start();

        pair.Client.BeginDrain();

        await Eventually.WaitUntilAsync(() => !pair.Server.AcceptsNewStreams, "the server hears the client's GoAway");
        Assert.True(pair.Server.IsOpen);
        Assert.Equal(StreamOpenStatus.UplinkClosed, pair.Server.TryOpenStream(new RequestHead("GET", "/", []), endStream: true, out _));
    }

    [Fact]
    public async Task A_draining_client_resets_a_stream_that_arrives_anyway_as_draining()
    {
        await using var peer = RawPeer.ForClient();
        peer.Uplink.BeginDrain();
        ReceivedFrame goAway = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.GoAway)).Match;
        Assert.Equal(FrameBytes.GoAway(0, ProtocolErrorCode.NoError), goAway.Payload);

        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, 1, FrameBytes.Encode(new RequestHead("GET", "/", [])));

        ReceivedFrame reset = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset)).Match;
        Assert.Equal(1u, reset.Header.StreamId);
        Assert.Equal(FrameBytes.U32((uint)ProtocolErrorCode.Draining), reset.Payload);
        Assert.Empty(peer.Handler!.Ids);
        Assert.True(peer.Uplink.IsOpen);
    }
}
