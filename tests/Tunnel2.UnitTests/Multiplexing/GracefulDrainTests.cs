using System.Buffers.Binary;
using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>DrainAsync: GoAway, the peer's acknowledgment, open streams finish, last frames flushed, close.</summary>
public sealed class GracefulDrainTests
{
    private static readonly RequestHead Get = new("GET", "/", []);

    [Fact]
    public async Task A_draining_client_lets_its_open_stream_finish_then_closes()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(Get, endStream: true);

        Task<bool> drain = pair.Client.DrainAsync(TestTimeouts.Default);

        await Eventually.WaitUntilAsync(() => !pair.Server.AcceptsNewStreams, "the server hears the GoAway");
        await pair.Client.DrainAcknowledged.WithTimeout();
        Assert.False(drain.IsCompleted);
        Assert.True(pair.Client.IsOpen);

        client.SendResponseHead(new ResponseHead(200, []), endStream: false);
        await client.SendBodyAsync(PipeReader.Create(new MemoryStream("last bytes"u8.ToArray())), CancellationToken.None).WithTimeout();
        client.Dispose();

        Assert.True(await drain.WithTimeout());
        Assert.Equal("drained", pair.Client.CloseReason);
        Assert.Equal(200, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
        Assert.Equal("last bytes"u8.ToArray(), await server.ReadAllAsync()); // flushed before the close
        await pair.ClientRun.WithTimeout();
    }

    [Fact]
    public async Task The_drain_deadline_cuts_streams_still_open()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, _) = await pair.OpenAsync(Get, endStream: true);

        Assert.False(await pair.Client.DrainAsync(TimeSpan.FromMilliseconds(200)).WithTimeout());

        Assert.Equal("drain deadline passed", pair.Client.CloseReason);
        await Assert.ThrowsAsync<UplinkClosedException>(() => server.ReadResponseHeadAsync().WithTimeout());
    }

    [Fact]
    public async Task A_stream_the_server_opened_before_it_saw_the_GoAway_is_refused_and_the_drain_waits_for_the_acknowledgment()
    {
        await using var peer = RawPeer.ForClient();
        Task<bool> drain = peer.Uplink.DrainAsync(TestTimeouts.Default);
        (ReceivedFrame ping, List<ReceivedFrame> before) = await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Ping);
        Assert.Contains(before, f => f.Header.Type == FrameType.GoAway);

        // The server opened this stream before it read the GoAway: it crosses the GoAway on the wire.
        await peer.SendFrameAsync(FrameType.RequestHead, FrameFlags.EndStream, 1, FrameBytes.Encode(Get));
        ReceivedFrame reset = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Reset)).Match;
        Assert.Equal(1u, reset.Header.StreamId);
        Assert.Equal(FrameBytes.U32((uint)ProtocolErrorCode.Draining), reset.Payload);
        Assert.False(drain.IsCompleted); // no stream is open, but the server has not confirmed it saw the GoAway

        await peer.SendFrameAsync(FrameType.Pong, 0, ping.Payload);

        Assert.True(await drain.WithTimeout());
        Assert.Equal("drained", peer.Uplink.CloseReason);
        Assert.Empty(peer.Handler!.Ids);
    }

    [Fact]
    public async Task A_keep_alive_pong_does_not_count_as_the_drain_acknowledgment()
    {
        await using var peer = RawPeer.ForClient();
        peer.Uplink.BeginDrain();
        ReceivedFrame ping = (await peer.ReadUntilAsync(f => f.Header.Type == FrameType.Ping)).Match;

        await peer.SendFrameAsync(FrameType.Pong, 0, FrameBytes.U64(1));
        await peer.PingRoundTripAsync(); // the uplink has handled the Pong above
        Assert.False(peer.Uplink.DrainAcknowledged.IsCompleted);

        await peer.SendFrameAsync(FrameType.Pong, 0, ping.Payload);
        await peer.Uplink.DrainAcknowledged.WithTimeout();
        Assert.NotEqual(1ul, BinaryPrimitives.ReadUInt64BigEndian(ping.Payload));
    }

    [Fact]
    public async Task Closing_never_waits_on_a_frozen_peer()
    {
        var frozen = new FrozenStream();
        var uplink = new Uplink(new DuplexPipe(new Pipe().Reader, PipeWriter.Create(frozen, new StreamPipeWriterOptions(leaveOpen: true))),
            new UplinkSettings(), UplinkRole.Server, NullLogger.Instance, name: "frozen");
        Task run = uplink.RunAsync();
        UplinkStream stream = uplink.OpenStreamOrFail(Get, endStream: true);
        await Eventually.WaitUntilAsync(() => frozen.Writes == 1, "the writer is stuck writing the request head");

        uplink.Close("keep-alive timeout");

        await run.WithTimeout();
        Assert.Equal(0, frozen.UncancellableWrites); // the unsent head was dropped, not written with no way to stop
        await Assert.ThrowsAsync<UplinkClosedException>(() => stream.ReadResponseHeadAsync().WithTimeout());
        frozen.Dispose();
    }
}
