using System.Diagnostics;
using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

[Collection(SerialCollection.Name)]
public sealed class KeepAliveTests
{
    private static readonly UplinkSettings FastKeepAlive = new()
    {
        KeepAliveInterval = TimeSpan.FromMilliseconds(100),
        KeepAliveTimeout = TimeSpan.FromMilliseconds(300),
    };

    [Fact]
    public async Task An_uplink_whose_peer_never_answers_closes_itself_for_keep_alive()
    {
        var silentInput = new Pipe(); // nothing is ever written to it
        var output = new Pipe();
        var clock = Stopwatch.StartNew();
        var uplink = new Uplink(new DuplexPipe(silentInput.Reader, output.Writer), FastKeepAlive, UplinkRole.Server, NullLogger.Instance);

        await uplink.RunAsync().WaitAsync(TimeSpan.FromSeconds(3));

        Assert.Contains("keep-alive", uplink.CloseReason, StringComparison.Ordinal);
        // Not before the 300 ms timeout (less a little for the coarse tick clock the uplink uses).
        Assert.True(clock.Elapsed >= TimeSpan.FromMilliseconds(280), $"closed after only {clock.ElapsedMilliseconds} ms");
        Assert.True(PingsIn(output.Reader) >= 1, "the uplink never pinged its silent peer");
    }

    [Fact]
    public async Task An_uplink_whose_peer_never_answers_fails_its_open_streams()
    {
        var uplink = new Uplink(new DuplexPipe(new Pipe().Reader, new Pipe().Writer), FastKeepAlive, UplinkRole.Server, NullLogger.Instance);
        Task run = uplink.RunAsync();
        UplinkStream stream = uplink.OpenStreamOrFail(new Tunnel2.Protocol.Heads.RequestHead("GET", "/", []), endStream: true);

        await Assert.ThrowsAsync<UplinkClosedException>(() => stream.ReadResponseHeadAsync().WaitAsync(TimeSpan.FromSeconds(3)));
        await run.WaitAsync(TimeSpan.FromSeconds(3));
    }

    [Fact]
    public async Task Two_live_idle_uplinks_keep_each_other_open_past_the_timeout()
    {
        await using var pair = UplinkPair.Start(FastKeepAlive);

        // The assertion is that nothing happens for about three keep-alive timeouts.
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(1))
        {
            Assert.True(pair.Server.IsOpen, $"server closed after {clock.ElapsedMilliseconds} ms: {pair.Server.CloseReason}");
            Assert.True(pair.Client.IsOpen, $"client closed after {clock.ElapsedMilliseconds} ms: {pair.Client.CloseReason}");
            await Task.Delay(TimeSpan.FromMilliseconds(20));
        }
    }

    [Fact]
    public async Task An_uplink_answers_a_ping_with_the_same_bytes()
    {
        await using var peer = RawPeer.ForServer();

        await peer.SendFrameAsync(FrameType.Ping, 0, FrameBytes.U64(0x0102030405060708));

        ReceivedFrame? pong = await peer.ReadFrameAsync();
        Assert.NotNull(pong);
        Assert.Equal(new FrameHeader(8, FrameType.Pong, FrameFlags.None, 0), pong.Header);
        Assert.Equal(FrameBytes.U64(0x0102030405060708), pong.Payload);
    }

    private static int PingsIn(PipeReader reader)
    {
        int pings = 0;
        if (reader.TryRead(out ReadResult result))
        {
            System.Buffers.ReadOnlySequence<byte> buffer = result.Buffer;
            while (FrameReader.TryReadFrame(ref buffer, 1024, out FrameHeader header, out _))
            {
                pings += header.Type == FrameType.Ping ? 1 : 0;
            }

            reader.AdvanceTo(result.Buffer.End);
        }

        return pings;
    }
}
