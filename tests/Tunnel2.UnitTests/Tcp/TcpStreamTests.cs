using System.Buffers;
using System.Net;
using System.Text;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp;

/// <summary>Version 5's TCP streams on the uplink: the TcpOpen frame, bytes both ways without heads, and who may open one.</summary>
public sealed class TcpStreamTests
{
    private static readonly TcpStreamOpen Open = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Parse("192.0.2.7"), 50123), new IPEndPoint(IPAddress.Loopback, 20001));

    [Theory]
    [InlineData("192.0.2.7", 50123, "127.0.0.1", 20001, 13)]
    [InlineData("2001:db8::7", 443, "::1", 22, 37)]
    [InlineData("::ffff:192.0.2.7", 1, "127.0.0.1", 65535, 13)]
    [InlineData("192.0.2.7", 5, "2001:db8::1", 6, 37)]
    public void The_open_payload_round_trips_in_one_family(string caller, int callerPort, string listener, int listenerPort, int length)
    {
        TcpStreamOpen open = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Parse(caller), callerPort), new IPEndPoint(IPAddress.Parse(listener), listenerPort));
        byte[] bytes = new byte[open.EncodedLength];

        open.Write(bytes);
        TcpStreamOpen read = TcpStreamOpen.Read(new ReadOnlySequence<byte>(bytes));

        Assert.Equal(length, bytes.Length);
        Assert.Equal(open, read);
        Assert.Equal(callerPort, read.Caller.Port);
        Assert.Equal(listenerPort, read.Listener.Port);
    }

    [Theory]
    [InlineData(new byte[0])]
    [InlineData(new byte[] { 4, 1, 2, 3 })]
    [InlineData(new byte[] { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 })]
    [InlineData(new byte[] { 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 })]
    public void A_malformed_open_payload_is_a_protocol_violation(byte[] payload)
    {
        Assert.Throws<Tunnel2.Protocol.Frames.ProtocolViolationException>(() => TcpStreamOpen.Read(new ReadOnlySequence<byte>(payload)));
    }

    [Fact]
    public async Task A_tcp_stream_carries_bytes_both_ways_with_no_head_and_half_closes_each_way()
    {
        await using var pair = UplinkPair.Start();

        Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenTcpStream(Open, out UplinkStream? server));
        UplinkStream client = await pair.Handler.NextAsync();
        Assert.Equal(Open, client.Tcp);
        Assert.Null(client.RequestHead);
        await client.SendAsync(new ReadOnlySequence<byte>("+OK ready\r\n"u8.ToArray()), endStream: true, CancellationToken.None);
        await server!.SendAsync(new ReadOnlySequence<byte>("PING\r\n"u8.ToArray()), endStream: true, CancellationToken.None);

        Assert.Equal("+OK ready\r\n", Encoding.ASCII.GetString(await server.ReadAllAsync()));
        Assert.Equal("PING\r\n", Encoding.ASCII.GetString(await client.ReadAllAsync()));
        server.Dispose();
        client.Dispose();
        Assert.True(pair.Server.IsOpen && pair.Client.IsOpen);
    }

    [Fact]
    public async Task The_server_side_of_a_tcp_stream_has_its_head_at_once_takes_data_at_once_and_calls_a_response_head_a_second_head()
    {
        await using var peer = RawPeer.ForServer();
        Assert.Equal(StreamOpenStatus.Opened, peer.Uplink.TryOpenTcpStream(Open, out UplinkStream? stream));

        // No head comes on the wire: the stand-in is there as the stream opens, and no head timeout applies.
        Assert.True(stream!.ReadResponseHeadAsync().IsCompletedSuccessfully);
        Assert.False(stream.IsResponseHeadOverdue(Environment.TickCount64 + 3_600_000, timeoutMs: 1));

        // The target's first bytes, alone in their batch (the reader hands no head over after it).
        await peer.SendFrameAsync(FrameType.Data, 1, "+OK ready\r\n"u8.ToArray());
        await stream.WaitForInputAsync(CancellationToken.None).AsTask().WithTimeout();
        Assert.True(stream.Input.TryRead(out System.IO.Pipelines.ReadResult buffered));
        Assert.Equal("+OK ready\r\n", Encoding.ASCII.GetString(buffered.Buffer.ToArray()));
        stream.Input.AdvanceTo(buffered.Buffer.Start);
        Assert.True(peer.Uplink.IsOpen);

        await peer.SendFrameAsync(FrameType.ResponseHead, 1, FrameBytes.Encode(new Tunnel2.Protocol.Heads.ResponseHead(200, [])));
        Assert.StartsWith("protocol error: Second response head", await peer.WaitClosedAsync(), StringComparison.Ordinal);
        stream.Dispose();
    }

    [Fact]
    public async Task A_version_4_uplink_opens_no_tcp_stream_and_refuses_a_TcpOpen_frame()
    {
        var v4 = new UplinkSettings { ProtocolVersion = 4 };
        await using var pair = UplinkPair.Start(v4);
        Assert.Throws<InvalidOperationException>(() => pair.Server.TryOpenTcpStream(Open, out _));

        await using var client = RawPeer.ForClient(v4);
        byte[] payload = new byte[Open.EncodedLength];
        Open.Write(payload);
        await client.SendFrameAsync(FrameType.TcpOpen, 1, payload);
        await client.Run;

        Assert.StartsWith("protocol error", client.Uplink.CloseReason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_server_refuses_a_TcpOpen_frame_from_the_client()
    {
        await using var server = RawPeer.ForServer();
        byte[] payload = new byte[Open.EncodedLength];
        Open.Write(payload);
        await server.SendFrameAsync(FrameType.TcpOpen, 1, payload);
        await server.Run;

        Assert.StartsWith("protocol error", server.Uplink.CloseReason, StringComparison.Ordinal);
    }
}
