using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing.OnLoop;

/// <summary>
/// The client's uplink with its reader and writer on an event loop (issue 52, stage 3a), over real loopback sockets,
/// against a server uplink on the runtime's sockets or a raw peer the test plays.
/// </summary>
public sealed class LoopUplinkTests
{
    [Fact]
    public async Task Bodies_both_ways_arrive_intact()
    {
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartWithServer();
        byte[] request = Pattern(1_000_000, seed: 1);
        byte[] response = Pattern(3_000_000, seed: 2);

        UplinkStream server = harness.Server!.OpenStreamOrFail(new RequestHead("POST", "/up", []), endStream: false);
        Task sendRequest = server.SendBodyAsync(PipeReader.Create(new MemoryStream(request)), CancellationToken.None);
        UplinkStream client = await harness.Handler.NextAsync();
        Assert.Equal(request, await client.ReadAllAsync());
        await sendRequest.WithTimeout();

        client.SendResponseHead(new ResponseHead(200, [new("X-On", "loop")]), endStream: false);
        Task sendResponse = client.SendBodyAsync(PipeReader.Create(new MemoryStream(response)), CancellationToken.None);
        ResponseHead head = await server.ReadResponseHeadAsync().WithTimeout();
        Assert.Equal(200, head.StatusCode);
        Assert.Equal(response, await server.ReadAllAsync());
        await sendResponse.WithTimeout();

        await Eventually.WaitUntilAsync(() => harness.Server!.ActiveStreamCount == 0 && harness.Client.ActiveStreamCount == 0, "both ends forget the stream");
        Assert.True(harness.Client.IsOnLoop);
    }

    [Fact]
    public async Task A_thousand_concurrent_streams_each_keep_their_bytes()
    {
        const int Streams = 1000;
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartWithServer(new UplinkSettings { MaxConcurrentStreams = 2000 });
        var servers = new UplinkStream[Streams];
        var clientSide = Task.Run(async () =>
        {
            var echoes = new List<Task>(Streams);
            for (int i = 0; i < Streams; i++)
            {
                UplinkStream client = await harness.Handler.NextAsync();
                echoes.Add(EchoAsync(client));
            }

            await Task.WhenAll(echoes);
        });

        for (int i = 0; i < Streams; i++)
        {
            servers[i] = harness.Server!.OpenStreamOrFail(new RequestHead("POST", $"/{i}", []), endStream: false);
        }

        var checks = new Task[Streams];
        for (int i = 0; i < Streams; i++)
        {
            byte[] body = Pattern(4096 + (i * 37 % 20_000), seed: i);
            UplinkStream server = servers[i];
            checks[i] = Task.Run(async () =>
            {
                Task send = server.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
                Assert.Equal(200, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
                Assert.Equal(body, await server.ReadAllAsync());
                await send.WithTimeout();
            });
        }

        await Task.WhenAll(checks).WithTimeout();
        await clientSide.WithTimeout();
        await Eventually.WaitUntilAsync(() => harness.Client.ActiveStreamCount == 0, "the client forgets every stream");
    }

    [Fact]
    public async Task Bytes_read_past_the_handshake_and_a_split_frame_header_are_the_parsers_first()
    {
        byte[] body = Pattern(70_000, seed: 5);
        UplinkStream? opened = null;
        Task? send = null;

        // The test reads 13 bytes (the head's frame header and 3 bytes of its payload) off the client's socket before
        // the loop takes it: they reach the uplink first, and the rest of that frame comes from the loop's first read.
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartWithServer(
            beforeClient: server =>
            {
                opened = server.OpenStreamOrFail(new RequestHead("PUT", "/early", [new("X-Early", "yes")]), endStream: false);
                send = opened.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
            },
            early: FrameHeader.Size + 3);

        UplinkStream client = await harness.Handler.NextAsync();
        Assert.Equal("/early", client.RequestHead!.Target);
        Assert.Equal(body, await client.ReadAllAsync());
        await send!.WithTimeout();
        client.SendResponseHead(new ResponseHead(204, []), endStream: true);
        Assert.Equal(204, (await opened!.ReadResponseHeadAsync().WithTimeout()).StatusCode);
    }

    [Fact]
    public async Task A_frame_split_across_many_reads_is_dispatched_once_whole()
    {
        // A Ping, written a byte at a time: the client answers with one Pong carrying the same 8 bytes.
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartRaw();
        byte[] ping = Frame(FrameType.Ping, 0, [1, 2, 3, 4, 5, 6, 7, 8]);
        foreach (byte b in ping)
        {
            harness.Raw.Send([b]);
            await Task.Yield();
        }

        byte[] pong = await ReceiveExactlyAsync(harness.Raw, FrameHeader.Size + 8);
        FrameHeader header = FrameHeader.ReadFrom(pong);
        Assert.Equal(FrameType.Pong, header.Type);
        Assert.Equal(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 }, pong[FrameHeader.Size..]);
    }

    [Fact]
    public async Task A_protocol_error_is_answered_with_a_GoAway_and_the_close_is_logged_off_the_loop()
    {
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartRaw(expectErrors: true);

        // Data for a stream the server never opened.
        harness.Raw.Send(Frame(FrameType.Data, 7, [42]));

        byte[] goAway = await ReceiveExactlyAsync(harness.Raw, FrameHeader.Size + 8);
        Assert.Equal(FrameType.GoAway, FrameHeader.ReadFrom(goAway).Type);
        await harness.ClientRun.WithTimeout();
        Assert.StartsWith("protocol error", harness.Client.CloseReason, StringComparison.Ordinal);
        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task Early_bytes_that_break_the_protocol_close_the_uplink()
    {
        byte[] early = Frame(FrameType.Data, 9, [1]);
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartRaw(early, expectErrors: true);

        await harness.ClientRun.WithTimeout();
        Assert.StartsWith("protocol error", harness.Client.CloseReason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_peer_that_does_not_read_holds_the_writer_back_and_the_close_still_ends_it()
    {
        var settings = new UplinkSettings { InitialStreamWindow = 8 << 20, ConnectionWindow = 64 << 20 };
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartRaw(settings: settings);
        harness.Raw.ReceiveBufferSize = 64 * 1024;

        // The raw server opens stream 1 and never reads: the client's answer fills the socket, the loop's queue
        // (its window), then the scheduler's data budget, and the sender waits.
        harness.Raw.Send(Frame(FrameType.RequestHead, 1, RequestHeadBytes("/big"), FrameFlags.EndStream));
        UplinkStream client = await harness.Handler.NextAsync();
        client.SendResponseHead(new ResponseHead(200, []), endStream: false);
        using var stop = new CancellationTokenSource();
        Task send = client.SendBodyAsync(PipeReader.Create(new EndlessStream()), stop.Token);

        await Task.Delay(500); // lets the writer run into the full socket; what follows holds whether or not it has
        Assert.False(send.IsCompleted, "a sender whose peer does not read is held back by the windows");
        Assert.True(harness.Client.IsOpen);

        harness.Client.Close("test: the peer does not read");
        await harness.ClientRun.WithTimeout();
        await Assert.ThrowsAnyAsync<Exception>(() => send.WithTimeout());
    }

    [Fact]
    public async Task The_peer_vanishing_mid_stream_closes_the_uplink_and_fails_the_stream()
    {
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartRaw();
        harness.Raw.Send(Frame(FrameType.RequestHead, 1, RequestHeadBytes("/gone")));
        harness.Raw.Send(Frame(FrameType.Data, 1, Pattern(1000, seed: 3)));
        UplinkStream client = await harness.Handler.NextAsync();
        await client.WaitForInputAsync(CancellationToken.None).AsTask().WithTimeout();

        harness.Raw.LingerState = new LingerOption(true, 0);
        harness.Raw.Close(); // a reset, half-way through the body: the client's loop reads an error

        await harness.ClientRun.WithTimeout();
        Assert.False(harness.Client.IsOpen);
        Assert.Matches("transport error|peer closed", harness.Client.CloseReason!);
        await Assert.ThrowsAnyAsync<Exception>(() => client.ReadAllAsync());
    }

    [Fact]
    public async Task The_server_closing_ends_the_client_on_the_loop()
    {
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartWithServer();
        harness.Server!.Close("test: server leaves");
        await harness.ServerRun.WithTimeout();
        harness.Raw.Shutdown(SocketShutdown.Both); // as the server's host does once its uplink has run

        await harness.ClientRun.WithTimeout();
        Assert.Equal("peer closed the connection", harness.Client.CloseReason);
    }

    [Fact]
    public async Task The_client_closing_on_the_loop_ends_the_server()
    {
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartWithServer();
        harness.Client.Close("test: client leaves");

        await harness.ClientRun.WithTimeout();
        await harness.ServerRun.WithTimeout();
        Assert.Equal("peer closed the connection", harness.Server!.CloseReason);
    }

    [Fact]
    public async Task A_GoAway_from_the_server_is_heard_and_logged_off_the_loop()
    {
        await using LoopUplinkHarness harness = await LoopUplinkHarness.StartRaw();
        harness.Raw.Send(Frame(FrameType.GoAway, 0, [0, 0, 0, 0, 0, 0, 0, 0]));

        await Eventually.WaitUntilAsync(() => !harness.Client.AcceptsNewStreams, "the client hears the server drain");
        await Eventually.WaitUntilAsync(() => harness.Lines.Any(line => line.Contains("peer is draining", StringComparison.Ordinal)), "the drain is logged");
        Assert.Equal(0, harness.FaultCount);
    }

    [Fact]
    public async Task Disposing_an_uplink_that_never_ran_closes_its_socket()
    {
        (Socket client, Socket server) = await LoopUplinkHarness.ConnectedPairAsync();
        using (server)
        using (var loop = new Tunnel2.Loops.EventLoop("test-unstarted"))
        {
            Uplink uplink = Uplink.OnLoop(loop, client, ReadOnlyMemory<byte>.Empty, new UplinkSettings(), Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance, new RecordingStreamHandler());
            uplink.Dispose();

            Assert.Equal(0, await ReceiveAsync(server)); // the far end reads the end of stream
        }
    }

    private static async Task EchoAsync(UplinkStream client)
    {
        byte[] body = await client.ReadAllAsync();
        client.SendResponseHead(new ResponseHead(200, []), endStream: false);
        await client.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
    }

    private static byte[] RequestHeadBytes(string target)
    {
        var head = new PooledBufferWriter();
        HeadCodec.WriteRequestHead(head, new RequestHead("GET", target, []));
        byte[] pooled = head.Detach(out int length);
        byte[] bytes = pooled.AsSpan(0, length).ToArray();
        ArrayPool<byte>.Shared.Return(pooled);
        return bytes;
    }

    private static byte[] Frame(FrameType type, uint streamId, byte[] payload, FrameFlags flags = FrameFlags.None)
    {
        byte[] frame = new byte[FrameHeader.Size + payload.Length];
        new FrameHeader(payload.Length, type, flags, streamId).WriteTo(frame);
        payload.CopyTo(frame, FrameHeader.Size);
        return frame;
    }

    private static async Task<byte[]> ReceiveExactlyAsync(Socket socket, int count)
    {
        byte[] bytes = new byte[count];
        int read = 0;
        while (read < count)
        {
            int n = await socket.ReceiveAsync(bytes.AsMemory(read), SocketFlags.None).AsTask().WithTimeout();
            Assert.True(n > 0, $"the connection ended after {read} of {count} bytes");
            read += n;
        }

        return bytes;
    }

    private static Task<int> ReceiveAsync(Socket socket) => socket.ReceiveAsync(new byte[16], SocketFlags.None).WithTimeout();

    internal static byte[] Pattern(int length, int seed)
    {
        byte[] bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    /// <summary>A source that never ends: each read fills the buffer.</summary>
    private sealed class EndlessStream : Stream
    {
        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count) => count;

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
