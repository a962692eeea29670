using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Loops.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying.OnLoop;
using Tunnel2.Protocol.Tcp;
using Tunnel2.UnitTests.Infrastructure;
using Tunnel2.UnitTests.Loops;

namespace Tunnel2.UnitTests.Relaying;

/// <summary>
/// The buffers of <see cref="LoopStreamConnection"/>'s reads (the socket's bytes to the peer): each becomes a Data frame
/// whose buffer the uplink's writer gives back to the frames' pool once written, so the reads must rent from that same
/// pool. Renting from the runtime's shared pool instead made every read a new array (the shared pool never got one back)
/// and a 1 GiB WebSocket echo on the client's loop grew the process by about 100 MiB of collectable garbage.
/// </summary>
public sealed class LoopStreamConnectionBufferTests
{
    private static readonly TcpStreamOpen Open = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Parse("192.0.2.7"), 50123), new IPEndPoint(IPAddress.Loopback, 20001));

    [Fact]
    public async Task A_bulk_transfer_from_the_socket_reuses_the_frames_buffers_instead_of_allocating_one_per_read()
    {
        const long warmup = 16L * 1024 * 1024;
        const long total = 64L * 1024 * 1024;
        using var harness = new LoopHarness();
        await using var pair = UplinkPair.Start();
        Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenTcpStream(Open, out IByteStream? atServer));
        UplinkStream atClient = await pair.Handler.NextAsync();

        using Socket listener = LoopHarness.Listening();
        using Socket feeder = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        feeder.Connect((IPEndPoint)listener.LocalEndPoint!);
        Socket relayed = listener.Accept();

        var connection = new RelayedConnection(harness.Loop, atClient);
        var reads = new MeasuredReads(connection, warmup);
        await harness.OnLoopAsync(() => connection.Start(relayed, reads));

        Task feeding = Task.Run(() => Feed(feeder, total));
        await atServer!.CopyInputToAsync(Stream.Null, CancellationToken.None).WithTimeout();
        await feeding.WithTimeout();

        long measured = total - warmup;
        long allocated = await harness.OnLoopAsync(() => reads.Allocated);
        Assert.Equal(total, connection.FromSocket);
        Assert.True(allocated < measured / 8, $"the reads allocated {allocated / 1024} KiB on the loop for {measured / 1024 / 1024} MiB relayed");
        atServer.Dispose();
    }

    private static void Feed(Socket socket, long total)
    {
        byte[] chunk = new byte[256 * 1024];
        for (long sent = 0; sent < total; sent += chunk.Length)
        {
            socket.Send(chunk);
        }

        socket.Shutdown(SocketShutdown.Send);
    }

    /// <summary>The shared relay over a socket the test accepted; the stream stays the test's.</summary>
    private sealed class RelayedConnection(EventLoop loop, IByteStream stream) : LoopStreamConnection(loop, stream)
    {
        protected override ProtocolErrorCode SocketFailureCode => ProtocolErrorCode.BackendAborted;

        protected override bool OwnsStream => false;

        /// <summary>On the loop: the socket's events go through <paramref name="handler"/> (which passes them on).</summary>
        public void Start(Socket socket, ILoopSocketHandler handler)
        {
            Stream.AttachInboundSink(this);
            Stream.SetAbortListener(this);
            Attach(LoopSocket.Adopt(Loop, socket, handler), socket, connected: true);
        }

        protected override void OnEnded(in LoopRelayEnd ending)
        {
        }
    }

    /// <summary>Passes the socket's events on, and counts what the reads allocate on the loop once past the warm-up.</summary>
    private sealed class MeasuredReads(LoopStreamConnection inner, long warmup) : ILoopSocketHandler
    {
        public long Allocated { get; private set; }

        public void OnConnected(LoopSocket socket) => inner.OnConnected(socket);

        public void OnReadable(LoopSocket socket)
        {
            bool counted = inner.FromSocket >= warmup;
            long before = GC.GetAllocatedBytesForCurrentThread();
            inner.OnReadable(socket);
            if (counted)
            {
                Allocated += GC.GetAllocatedBytesForCurrentThread() - before;
            }
        }

        public void OnWritable(LoopSocket socket) => inner.OnWritable(socket);

        public void OnClosed(LoopSocket socket, LoopError reason) => inner.OnClosed(socket, reason);
    }
}
