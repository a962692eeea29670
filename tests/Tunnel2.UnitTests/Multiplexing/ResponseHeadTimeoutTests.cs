using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>The server's uplink resets a stream whose response head is overdue, on its tick, and keeps the others.</summary>
public sealed class ResponseHeadTimeoutTests
{
    private static readonly RequestHead Get = new("GET", "/", []);
    private static readonly UplinkSettings ShortHeadTimeout = new() { ResponseHeadTimeout = TimeSpan.FromMilliseconds(300) };

    [Fact]
    public async Task An_overdue_stream_is_reset_with_response_head_timeout_and_an_answered_one_is_not()
    {
        await using var peer = RawPeer.ForServer(ShortHeadTimeout);
        UplinkStream silent = peer.Uplink.OpenStreamOrFail(Get, endStream: true);
        UplinkStream answered = peer.Uplink.OpenStreamOrFail(Get, endStream: true);
        await peer.SendFrameAsync(FrameType.ResponseHead, 2, FrameBytes.Encode(new ResponseHead(200, [])));
        Assert.Equal(200, (await answered.ReadResponseHeadAsync().WithTimeout()).StatusCode);

        var error = await Assert.ThrowsAsync<StreamResetException>(() => silent.ReadResponseHeadAsync().WithTimeout());

        Assert.Equal(ProtocolErrorCode.ResponseHeadTimeout, error.ErrorCode);
        ReceivedFrame reset = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset)).Match;
        Assert.Equal(1u, reset.Header.StreamId);
        Assert.Equal(FrameBytes.U32((uint)ProtocolErrorCode.ResponseHeadTimeout), reset.Payload);
        Assert.Null(answered.ResetCode);
    }

    [Fact]
    public async Task In_a_crowd_of_1000_streams_exactly_the_silent_half_is_reset_and_the_answered_half_is_not()
    {
        await using var peer = RawPeer.ForServer(new UplinkSettings { ResponseHeadTimeout = TimeSpan.FromSeconds(2) });
        var streams = new UplinkStream[1000];
        for (int i = 0; i < streams.Length; i++)
        {
            streams[i] = peer.Uplink.OpenStreamOrFail(Get, endStream: true);
        }

        byte[] ok = FrameBytes.Encode(new ResponseHead(200, []));
        for (int i = 0; i < streams.Length; i += 2)
        {
            await peer.SendFrameAsync(FrameType.ResponseHead, FrameFlags.EndStream, streams[i].Id, ok);
        }

        var resetIds = new HashSet<uint>();
        while (resetIds.Count < streams.Length / 2)
        {
            ReceivedFrame reset = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset)).Match;
            Assert.Equal(FrameBytes.U32((uint)ProtocolErrorCode.ResponseHeadTimeout), reset.Payload);
            Assert.True(resetIds.Add(reset.Header.StreamId));
        }

        for (int i = 0; i < streams.Length; i++)
        {
            if (i % 2 == 0)
            {
                Assert.Equal(200, (await streams[i].ReadResponseHeadAsync().WithTimeout()).StatusCode);
                Assert.DoesNotContain(streams[i].Id, resetIds);
            }
            else
            {
                var error = await Assert.ThrowsAsync<StreamResetException>(() => streams[i].ReadResponseHeadAsync().WithTimeout());
                Assert.Equal(ProtocolErrorCode.ResponseHeadTimeout, error.ErrorCode);
            }
        }

        Assert.True(peer.Uplink.IsOpen);
    }

    [Fact]
    public async Task A_head_that_arrives_after_the_timeout_reset_is_dropped_and_the_uplink_stays_open()
    {
        await using var peer = RawPeer.ForServer(ShortHeadTimeout);
        UplinkStream late = peer.Uplink.OpenStreamOrFail(Get, endStream: true);
        await Assert.ThrowsAsync<StreamResetException>(() => late.ReadResponseHeadAsync().WithTimeout());

        await peer.SendFrameAsync(FrameType.ResponseHead, FrameFlags.EndStream, 1, FrameBytes.Encode(new ResponseHead(200, [])));
        await peer.PingRoundTripAsync();

        Assert.True(peer.Uplink.IsOpen);
    }

    [Fact]
    public async Task Without_a_head_timeout_a_stream_waits_past_several_ticks()
    {
        // A short keep-alive interval makes the tick 50 ms; no head timeout means no tick resets the stream.
        await using var peer = RawPeer.ForServer(new UplinkSettings { KeepAliveInterval = TimeSpan.FromMilliseconds(200) });
        UplinkStream waiting = peer.Uplink.OpenStreamOrFail(Get, endStream: true);

        // Two keep-alive Pings are two ticks' worth of the loop that would have reset it.
        await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Ping);
        await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Ping);
        await peer.SendFrameAsync(FrameType.ResponseHead, FrameFlags.EndStream, 1, FrameBytes.Encode(new ResponseHead(204, [])));

        Assert.Equal(204, (await waiting.ReadResponseHeadAsync().WithTimeout()).StatusCode);
    }
}
