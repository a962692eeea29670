using System.IO.Pipelines;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Tunnel2.Loops;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;
using Tunnel2.UnitTests.Multiplexing.OnLoop;

namespace Tunnel2.UnitTests.Uplinks.OnLoop;

/// <summary>
/// The server's uplink on an event loop (issue 52, stage 3b; <see cref="Uplink.ServerOnLoop"/>) against a client uplink
/// on the runtime's sockets, over a real loopback connection. A line logged on the loop faults there
/// (<see cref="LoopGuardLoggerProvider"/>), and every fault fails the test.
/// </summary>
public sealed class ServerLoopUplinkTests
{
    [Fact]
    public async Task Bodies_both_ways_arrive_intact_and_the_head_is_handed_over_off_the_loop()
    {
        await using var pair = await Pair.StartAsync();
        byte[] request = LoopUplinkTests.Pattern(1_000_000, seed: 3);
        byte[] response = LoopUplinkTests.Pattern(3_000_000, seed: 4);

        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/up", []), endStream: false);
        Task sendRequest = server.SendBodyAsync(PipeReader.Create(new MemoryStream(request)), CancellationToken.None);
        UplinkStream client = await pair.Handler.NextAsync();
        Assert.Equal(request, await client.ReadAllAsync());
        await sendRequest.WithTimeout();

        client.SendResponseHead(new ResponseHead(200, [new("X-Server", "loop")]), endStream: false);
        Task sendResponse = client.SendBodyAsync(PipeReader.Create(new MemoryStream(response)), CancellationToken.None);
        ResponseHead head = await server.ReadResponseHeadAsync().WithTimeout();
        Assert.False(EventLoop.IsLoopThread, "the owner's continuation ran on the loop");
        Assert.Equal(200, head.StatusCode);
        Assert.Equal(response, await server.ReadAllAsync());
        await sendResponse.WithTimeout();

        await Eventually.WaitUntilAsync(() => pair.Server.ActiveStreamCount == 0 && pair.Client.ActiveStreamCount == 0, "both ends forget the stream");
        Assert.True(pair.Server.IsOnLoop);
    }

    [Fact]
    public async Task A_small_whole_answer_is_handed_over_off_the_loop()
    {
        await using var pair = await Pair.StartAsync();
        for (int i = 0; i < 20; i++)
        {
            UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("GET", $"/{i}", []), endStream: true);
            UplinkStream client = await pair.Handler.NextAsync();
            client.SendResponseHead(new ResponseHead(204, []), endStream: true);

            Assert.Equal(204, (await server.ReadResponseHeadAsync().WithTimeout()).StatusCode);
            Assert.False(EventLoop.IsLoopThread, "the owner's continuation ran on the loop");
            server.Dispose();
            client.Dispose();
        }
    }

    [Fact]
    public async Task A_small_whole_answer_whose_owner_waits_on_the_same_loop_is_handed_over_inline_there()
    {
        await using var pair = await Pair.StartAsync();
        for (int i = 0; i < 20; i++)
        {
            var ranOnLoop = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            UplinkStream? server = null;
            string path = $"/{i}";
            Assert.True(pair.Loop.Post(() => _ = OwnOnLoopAsync()));
            UplinkStream client = await pair.Handler.NextAsync();
            client.SendResponseHead(new ResponseHead(204, []), endStream: true);

            Assert.True(await ranOnLoop.Task.WithTimeout(), "the owner's continuation left the loop");
            server!.Dispose();
            client.Dispose();

            async Task OwnOnLoopAsync()
            {
                // As the forwarder does with the public listener on the loop: it opens and waits on the loop's thread.
                server = pair.Server.OpenStreamOrFail(new RequestHead("GET", path, []), endStream: true);
                ResponseHead head = await server.ReadResponseHeadAsync();
                ranOnLoop.SetResult(EventLoop.IsLoopThread && head.StatusCode == 204);
            }
        }
    }

    [Fact]
    public async Task A_body_whose_flush_waits_is_handed_to_its_copy_loop_on_the_loop_not_a_pool_worker()
    {
        await using var pair = await Pair.StartAsync();
        byte[] body = LoopUplinkTests.Pattern(3_000_000, seed: 5);
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("GET", "/down", []), endStream: true);
        UplinkStream client = await pair.Handler.NextAsync();
        client.SendResponseHead(new ResponseHead(200, []), endStream: false);
        await server.ReadResponseHeadAsync().WithTimeout();

        // A destination that holds 64 KiB, like the public listener's response buffer: the reader's flushes wait.
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 64 * 1024, resumeWriterThreshold: 32 * 1024,
            readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, useSynchronizationContext: false));
        var destination = new AwaitSpyWriter(pipe);
        var received = new MemoryStream();
        Task drain = Task.Run(async () =>
        {
            while (true)
            {
                await destination.Awaited.WaitAsync();
                while (pipe.Reader.TryRead(out ReadResult read))
                {
                    foreach (ReadOnlyMemory<byte> segment in read.Buffer)
                    {
                        received.Write(segment.Span);
                    }

                    pipe.Reader.AdvanceTo(read.Buffer.End);
                    if (read.IsCompleted)
                    {
                        return;
                    }
                }
            }
        });

        Task copy = server.CopyInputToAsync(destination, chunked: false, CancellationToken.None);
        await client.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None).WithTimeout();
        await copy.WithTimeout();
        destination.Complete();
        destination.Awaited.Release();
        await drain.WithTimeout();

        Assert.Equal(body, received.ToArray());
        Assert.NotEmpty(destination.AwaitedOnLoop);
        Assert.All(destination.AwaitedOnLoop, onLoop => Assert.True(onLoop, "the copy loop was woken on a pool worker to await the reader's flush"));
        server.Dispose();
        client.Dispose();
    }

    [Fact]
    public async Task A_reset_by_the_client_fails_the_servers_wait_off_the_loop()
    {
        await using var pair = await Pair.StartAsync();
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("GET", "/reset", []), endStream: true);
        UplinkStream client = await pair.Handler.NextAsync();

        client.Reset(Tunnel2.Protocol.Frames.ProtocolErrorCode.BackendAborted);

        await Assert.ThrowsAsync<StreamResetException>(async () => await server.ReadResponseHeadAsync().WithTimeout());
        Assert.False(EventLoop.IsLoopThread, "the owner's error path ran on the loop");
        Assert.Equal(Tunnel2.Protocol.Frames.ProtocolErrorCode.BackendAborted, server.ResetCode);
        client.Dispose();
        server.Dispose();
    }

    [Fact]
    public async Task The_clients_going_away_closes_the_servers_uplink_on_the_loop()
    {
        await using var pair = await Pair.StartAsync();

        pair.Client.Close("client leaves");
        await pair.ClientRun.WithTimeout();
        await pair.CloseClientSocketAsync();

        await pair.ServerRun.WithTimeout();
        Assert.False(pair.Server.IsOpen);
    }

    /// <summary>The server's uplink on a loop, the client's on the runtime's sockets.</summary>
    private sealed class Pair : IAsyncDisposable
    {
        private readonly ILoggerFactory _logging = LoggerFactory.Create(builder => builder.AddProvider(new LoopGuardLoggerProvider()));
        private readonly List<Exception> _faults = [];
        private readonly NetworkStream _clientStream;

        private Pair(Socket client, Socket server)
        {
            Loop = new EventLoop("test-server-loop", fault => { lock (_faults) { _faults.Add(fault); } });
            Server = Uplink.ServerOnLoop(Loop, server, ReadOnlyMemory<byte>.Empty, new UplinkSettings(), _logging.CreateLogger("server"), "test-server-on-loop");
            ServerRun = Server.RunAsync();
            _clientStream = new NetworkStream(client, ownsSocket: true);
            Client = new Uplink(DuplexPipe.Over(_clientStream), new UplinkSettings(), UplinkRole.Client, _logging.CreateLogger("client"), Handler, "test-client");
            ClientRun = Client.RunAsync();
        }

        public EventLoop Loop { get; }

        public Uplink Server { get; }

        public Task ServerRun { get; }

        public Uplink Client { get; }

        public Task ClientRun { get; }

        public RecordingStreamHandler Handler { get; } = new();

        /// <summary>The client's socket closes (its uplink's owner does so once the uplink has run).</summary>
        public ValueTask CloseClientSocketAsync() => _clientStream.DisposeAsync();

        public static async Task<Pair> StartAsync()
        {
            (Socket client, Socket server) = await LoopUplinkHarness.ConnectedPairAsync();
            return new Pair(client, server);
        }

        public async ValueTask DisposeAsync()
        {
            Client.Close("test finished");
            Server.Close("test finished");
            await Task.WhenAll(ServerRun, ClientRun).WithTimeout();
            Server.Dispose();
            Client.Dispose();
            Loop.Dispose();
            await _clientStream.DisposeAsync();
            _logging.Dispose();
            lock (_faults)
            {
                Assert.Empty(_faults);
            }
        }
    }
}
