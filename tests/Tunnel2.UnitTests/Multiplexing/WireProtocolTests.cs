using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// One uplink against a peer played byte by byte by the test: the protocol rules of docs/protocol.md §4-5.
/// A broken rule closes the uplink with a reason starting "protocol error" and a GoAway carrying code 1.
/// </summary>
public sealed class WireProtocolTests
{
    private static readonly byte[] OkHead = FrameBytes.Encode(new ResponseHead(200, []));
    private static readonly byte[] GetHead = FrameBytes.Encode(new RequestHead("GET", "/", []));

    [Fact]
    public async Task A_protocol_error_sends_GoAway_with_code_1_then_closes_the_uplink()
    {
        await using var peer = RawPeer.ForServer();

        await peer.SendFrameAsync(FrameType.RequestHead, 1, GetHead); // the server never receives request heads

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        ReceivedFrame goAway = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.GoAway)).Match;
        Assert.Equal(0u, goAway.Header.StreamId);
        Assert.Equal(FrameBytes.GoAway(0, ProtocolErrorCode.ProtocolError), goAway.Payload);
        Assert.Null(await peer.ReadFrameAsync());
    }

    [Fact]
    public async Task An_orderly_end_of_the_connection_closes_the_uplink_as_peer_closed()
    {
        await using var peer = RawPeer.ForServer();

        peer.CompleteSending();

        Assert.Equal("peer closed the connection", await peer.WaitClosedAsync());
    }

    [Fact]
    public async Task A_connection_ending_inside_a_frame_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForServer();

        await peer.SendAsync(FrameBytes.Frame(FrameType.Ping, 0, FrameBytes.U64(1))[..13]);
        peer.CompleteSending();

        string reason = await peer.WaitClosedAsync();
        Assert.StartsWith("protocol error", reason, StringComparison.Ordinal);
        Assert.Contains("inside a frame", reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Frames_split_into_single_bytes_are_understood()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);
        byte[] bytes = FrameBytes.Concat(
            FrameBytes.Frame(FrameType.ResponseHead, 1, FrameBytes.Encode(new ResponseHead(200, [new("A", "b")]))),
            FrameBytes.Frame(FrameType.Data, FrameFlags.EndStream, 1, "body"u8));

        foreach (byte b in bytes)
        {
            await peer.SendAsync([b]);
        }

        Assert.Equal([new HeaderField("A", "b")], (await stream.ReadResponseHeadAsync().WithTimeout()).Headers);
        Assert.Equal("body"u8.ToArray(), await stream.ReadAllAsync());
    }

    [Fact]
    public async Task A_server_receiving_a_request_head_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForServer();

        await peer.SendFrameAsync(FrameType.RequestHead, 1, GetHead);

        Assert.Contains("request head", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_client_receiving_a_response_head_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForClient();
        await peer.SendFrameAsync(FrameType.RequestHead, 1, GetHead);

        await peer.SendFrameAsync(FrameType.ResponseHead, 1, OkHead);

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(FrameType.ResponseHead)]
    [InlineData(FrameType.Data)]
    [InlineData(FrameType.Reset)]
    [InlineData(FrameType.WindowUpdate)]
    public async Task A_frame_for_a_stream_never_opened_is_a_protocol_error(FrameType type)
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);

        await peer.SendFrameAsync(type, 2, PayloadFor(type));

        Assert.Contains("never opened", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(FrameType.ResponseHead)]
    [InlineData(FrameType.Data)]
    [InlineData(FrameType.Reset)]
    public async Task A_stream_frame_on_stream_0_is_a_protocol_error(FrameType type)
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);

        await peer.SendFrameAsync(type, 0, PayloadFor(type));

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(FrameType.Data)]
    [InlineData(FrameType.Reset)]
    [InlineData(FrameType.WindowUpdate)]
    public async Task A_frame_for_a_finished_stream_is_ignored(FrameType type)
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);
        await peer.SendFrameAsync(FrameType.ResponseHead, FrameFlags.EndStream, 1, OkHead);
        await stream.ReadResponseHeadAsync().WithTimeout();
        await Eventually.WaitUntilAsync(() => peer.Uplink.ActiveStreamCount == 0, "the finished stream is forgotten");

        await peer.SendFrameAsync(type, 1, PayloadFor(type));
        await peer.PingRoundTripAsync();

        Assert.True(peer.Uplink.IsOpen);
    }

    [Fact]
    public async Task Data_in_flight_when_this_side_reset_the_stream_is_ignored()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);
        await peer.SendFrameAsync(FrameType.ResponseHead, 1, OkHead);
        await stream.ReadResponseHeadAsync().WithTimeout();

        stream.Reset(ProtocolErrorCode.Cancelled);
        await peer.SendFrameAsync(FrameType.Data, 1, new byte[100]);

        // The Reset leaves in the stream's own order and a Pong in the control lane, so either may come first.
        (ReceivedFrame reset, _) = await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset);
        Assert.Equal(FrameBytes.U32((uint)ProtocolErrorCode.Cancelled), reset.Payload);
        List<ReceivedFrame> after = await peer.PingRoundTripAsync();
        Assert.True(peer.Uplink.IsOpen);
        Assert.DoesNotContain(after, f => f.Header.Type == FrameType.Reset);
    }

    [Fact]
    public async Task Data_before_the_response_head_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);

        await peer.SendFrameAsync(FrameType.Data, 1, [1, 2, 3]);

        Assert.Contains("before the response head", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_second_response_head_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);

        await peer.SendFrameAsync(FrameType.ResponseHead, 1, OkHead);
        await peer.SendFrameAsync(FrameType.ResponseHead, 1, OkHead);

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Data_after_the_end_of_the_stream_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForClient();
        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("POST", "/", [])));
        await peer.SendFrameAsync(FrameType.Data, FrameFlags.EndStream, 1, [1]);

        await peer.SendFrameAsync(FrameType.Data, 1, [2]);

        Assert.Contains("after the end", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_malformed_response_head_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream stream = peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);

        await peer.SendFrameAsync(FrameType.ResponseHead, 1, [0, 42, 0]); // status 42

        Assert.Contains("status", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        await Assert.ThrowsAsync<UplinkClosedException>(() => stream.ReadResponseHeadAsync().WithTimeout());
    }

    [Theory]
    [InlineData(1u)]
    [InlineData(3u)]
    public async Task A_request_head_whose_id_does_not_increase_is_a_protocol_error(uint secondId)
    {
        await using var peer = RawPeer.ForClient();
        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, 3, GetHead);

        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, secondId, GetHead);

        Assert.Contains("stream id", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        Assert.Equal([3u], peer.Handler!.Ids);
    }

    [Fact]
    public async Task A_request_head_on_stream_0_is_a_protocol_error()
    {
        await using var peer = RawPeer.ForClient();

        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, 0, GetHead);

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        Assert.Empty(peer.Handler!.Ids);
    }

    [Fact]
    public async Task Ids_may_skip_but_must_increase()
    {
        await using var peer = RawPeer.ForClient();

        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, 5, GetHead);
        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, 100, GetHead);
        await peer.PingRoundTripAsync();

        Assert.Equal([5u, 100u], peer.Handler!.Ids);
        Assert.True(peer.Uplink.IsOpen);
    }

    [Fact]
    public async Task A_bad_request_head_payload_is_a_protocol_error_and_no_stream_is_opened()
    {
        await using var peer = RawPeer.ForClient();

        await peer.SendFrameAsync(FrameType.RequestHead, 1, FrameBytes.Encode(new RequestHead("GET", "no-slash", [])));

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        Assert.Empty(peer.Handler!.Ids);
    }

    [Theory]
    [InlineData(FrameType.Ping, 0u, 7)]
    [InlineData(FrameType.Ping, 0u, 9)]
    [InlineData(FrameType.Ping, 1u, 8)]
    [InlineData(FrameType.Pong, 0u, 0)]
    [InlineData(FrameType.Pong, 5u, 8)]
    [InlineData(FrameType.GoAway, 0u, 4)]
    [InlineData(FrameType.GoAway, 1u, 8)]
    [InlineData(FrameType.Reset, 1u, 3)]
    [InlineData(FrameType.Reset, 1u, 8)]
    [InlineData(FrameType.WindowUpdate, 1u, 5)]
    public async Task A_control_frame_with_the_wrong_size_or_stream_is_a_protocol_error(FrameType type, uint streamId, int payloadLength)
    {
        await using var peer = RawPeer.ForServer();
        peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);

        await peer.SendFrameAsync(type, streamId, new byte[payloadLength]);

        Assert.StartsWith("protocol error", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_unsolicited_pong_is_accepted()
    {
        await using var peer = RawPeer.ForServer();

        await peer.SendFrameAsync(FrameType.Pong, 0, FrameBytes.U64(99));
        await peer.PingRoundTripAsync();

        Assert.True(peer.Uplink.IsOpen);
    }

    [Fact]
    public async Task An_oversized_frame_is_a_protocol_error_before_its_payload_arrives()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { MaxFramePayload = 16 * 1024 });

        await peer.SendAsync(FrameBytes.Header(16 * 1024 + 1, (byte)FrameType.Data, 0, 1));

        Assert.Contains("exceeds", await peer.WaitClosedAsync(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_protocol_error_fails_every_open_stream_and_leaves_the_uplink_closed()
    {
        await using var peer = RawPeer.ForServer();
        UplinkStream first = peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/1", []), endStream: true);
        UplinkStream second = peer.Uplink.OpenStreamOrFail(new RequestHead("GET", "/2", []), endStream: true);

        await peer.SendAsync(FrameBytes.Header(4, 0xEE, 0, 1));

        Assert.Contains("Unknown frame type", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        await Assert.ThrowsAsync<UplinkClosedException>(() => first.ReadResponseHeadAsync().WithTimeout());
        await Assert.ThrowsAsync<UplinkClosedException>(() => second.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(StreamOpenStatus.UplinkClosed, peer.Uplink.TryOpenStream(new RequestHead("GET", "/3", []), endStream: true, out _));
    }

    private static byte[] PayloadFor(FrameType type) => type switch
    {
        FrameType.ResponseHead => OkHead,
        FrameType.Reset => FrameBytes.U32((uint)ProtocolErrorCode.Cancelled),
        FrameType.WindowUpdate => FrameBytes.U32(100),
        _ => [1, 2, 3],
    };
}
