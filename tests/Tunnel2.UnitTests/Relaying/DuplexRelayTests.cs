using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Tunnel2.Protocol.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relaying;

/// <summary>
/// The one two-way relay over an uplink pair and real loopback sockets, as the TCP relays use it (a caller's socket on
/// the server's stream, a target's on the client's) and as the upgrades do (a byte stream): both directions, a
/// half-close each way, a reset, cancellation, and the result each end reports.
/// </summary>
public sealed class DuplexRelayTests
{
    private static readonly TcpStreamOpen Open = TcpStreamOpen.Of(new IPEndPoint(IPAddress.Loopback, 50123), new IPEndPoint(IPAddress.Loopback, 20001));

    [Fact]
    public async Task Bytes_cross_both_ways_and_the_callers_half_close_lets_the_target_still_answer()
    {
        await using Rig rig = await Rig.StartAsync();

        byte[] up = RandomBytes((1024 * 1024) + 17);
        Task<byte[]> atTarget = ReadToEndAsync(rig.Target);
        await rig.Caller.SendAsync(up, SocketFlags.None);
        rig.Caller.Shutdown(SocketShutdown.Send);
        Assert.Equal(up, await atTarget.WithTimeout());

        byte[] down = RandomBytes((512 * 1024) + 5);
        Task<byte[]> atCaller = ReadToEndAsync(rig.Caller);
        await rig.Target.SendAsync(down, SocketFlags.None);
        rig.Target.Shutdown(SocketShutdown.Send);
        Assert.Equal(down, await atCaller.WithTimeout());

        DuplexRelayResult server = await rig.ServerRelay.WithTimeout();
        DuplexRelayResult client = await rig.ClientRelay.WithTimeout();
        Assert.True(server.IsClean);
        Assert.True(client.IsClean);
        Assert.Equal(RelaySide.Local, server.FirstEnded); // the caller ended first
        Assert.Equal(RelaySide.Tunnel, client.FirstEnded); // the client saw the caller's end before its target's
        // Received bytes were all written to the other side's socket; sent ones are counted as the uplink's writer takes
        // them, and the last frames may still be queued when the relay ends.
        Assert.Equal(down.Length, server.BytesFromTunnel);
        Assert.Equal(up.Length, client.BytesFromTunnel);
        Assert.InRange(server.BytesToTunnel, 1, up.Length);
        Assert.InRange(client.BytesToTunnel, 1, down.Length);
        Assert.Null(server.FailedSide);
        Assert.Null(server.Error);
    }

    [Fact]
    public async Task The_targets_half_close_lets_the_caller_still_send()
    {
        await using Rig rig = await Rig.StartAsync();

        Task<byte[]> atCaller = ReadToEndAsync(rig.Caller);
        await rig.Target.SendAsync("hello"u8.ToArray(), SocketFlags.None);
        rig.Target.Shutdown(SocketShutdown.Send);
        Assert.Equal("hello"u8.ToArray(), await atCaller.WithTimeout());

        Task<byte[]> atTarget = ReadToEndAsync(rig.Target);
        await rig.Caller.SendAsync("still here"u8.ToArray(), SocketFlags.None);
        rig.Caller.Shutdown(SocketShutdown.Send);
        Assert.Equal("still here"u8.ToArray(), await atTarget.WithTimeout());

        DuplexRelayResult server = await rig.ServerRelay.WithTimeout();
        DuplexRelayResult client = await rig.ClientRelay.WithTimeout();
        Assert.True(server.IsClean && client.IsClean);
        Assert.Equal(RelaySide.Tunnel, server.FirstEnded);
        Assert.Equal(RelaySide.Local, client.FirstEnded);
    }

    [Fact]
    public async Task A_target_that_resets_resets_the_stream_with_the_local_failure_code_and_the_caller_is_cut()
    {
        await using Rig rig = await Rig.StartAsync();

        RelayEnd.Reset(rig.Target);

        DuplexRelayResult client = await rig.ClientRelay.WithTimeout();
        Assert.Equal(RelaySide.Local, client.FailedSide);
        Assert.Equal(RelayOutcome.Failed, client.FromLocal);
        Assert.IsType<SocketException>(client.Error);
        Assert.Null(client.PeerReset); // nobody had reset the stream before the target broke

        DuplexRelayResult server = await rig.ServerRelay.WithTimeout();
        Assert.Equal(RelaySide.Tunnel, server.FailedSide);
        Assert.Equal(ProtocolErrorCode.BackendAborted, server.PeerReset);
        Assert.False(server.IsClean);
        SocketException cut = await Assert.ThrowsAsync<SocketException>(() => ReadToEndAsync(rig.Caller).WithTimeout());
        Assert.Equal(SocketError.ConnectionReset, cut.SocketErrorCode);
    }

    [Fact]
    public async Task A_canceled_relay_resets_the_stream_and_says_it_was_canceled()
    {
        await using var pair = UplinkPair.Start();
        (Socket caller, Socket callerSide) = await ConnectedPairAsync();
        using (caller)
        using (callerSide)
        await using (var connection = new NetworkStream(callerSide, ownsSocket: false))
        {
            (UplinkStream server, UplinkStream client) = await OpenTcpAsync(pair);
            using var cancel = new CancellationTokenSource();
            Task<DuplexRelayResult> relay = DuplexRelay.RunAsync(server, RelayEnd.OfStream(connection, halfClose: callerSide), cancellationToken: cancel.Token);
            Task peerReads = client.CopyInputToAsync(Stream.Null, CancellationToken.None);

            await cancel.CancelAsync();

            DuplexRelayResult result = await relay.WithTimeout();
            Assert.True(result.Canceled);
            Assert.NotNull(result.FailedSide);
            Assert.False(result.IsClean);
            await Assert.ThrowsAsync<StreamResetException>(() => peerReads.WithTimeout());
            Assert.Equal(ProtocolErrorCode.Cancelled, client.ResetCode);
            server.Dispose();
            client.Dispose();
        }
    }

    [Fact]
    public async Task An_end_that_cannot_half_close_ends_the_relay_when_the_tunnel_ends_and_its_buffered_bytes_go_first()
    {
        await using var pair = UplinkPair.Start();
        (Socket caller, Socket callerSide) = await ConnectedPairAsync();
        using (caller)
        using (callerSide)
        await using (var connection = new NetworkStream(callerSide, ownsSocket: false))
        {
            (UplinkStream server, UplinkStream client) = await OpenTcpAsync(pair);
            var early = new Pipe();
            await early.Writer.WriteAsync("early "u8.ToArray());
            Task<DuplexRelayResult> relay = DuplexRelay.RunAsync(server, RelayEnd.OfStream(connection, buffered: early.Reader));
            var fromServer = new Pipe();
            Task peerReads = client.CopyInputToAsync(fromServer.Writer.AsStream(), CancellationToken.None);
            await caller.SendAsync("bytes"u8.ToArray(), SocketFlags.None);
            byte[] received = new byte["early bytes".Length];
            await fromServer.Reader.AsStream().ReadExactlyAsync(received).AsTask().WithTimeout();
            Assert.Equal("early bytes"u8.ToArray(), received);

            await client.SendAsync(new ReadOnlySequence<byte>("bye"u8.ToArray()), endStream: true, CancellationToken.None);

            DuplexRelayResult result = await relay.WithTimeout();
            Assert.Equal(RelaySide.Tunnel, result.FirstEnded);
            Assert.Equal(RelayOutcome.Completed, result.FromTunnel);
            Assert.Equal(RelayOutcome.Canceled, result.FromLocal); // stopped by the relay, not failed
            Assert.Null(result.FailedSide);
            Assert.Equal("bye"u8.ToArray(), await ReadAsync(caller, 3));
            await Assert.ThrowsAsync<StreamResetException>(() => peerReads.WithTimeout()); // this side's half never ended
            server.Dispose();
            client.Dispose();
        }
    }

    private static async Task<(UplinkStream Server, UplinkStream Client)> OpenTcpAsync(UplinkPair pair)
    {
        Assert.Equal(StreamOpenStatus.Opened, pair.Server.TryOpenTcpStream(Open, out UplinkStream? server));
        return (server!, await pair.Handler.NextAsync());
    }

    private static async Task<(Socket Outer, Socket Inner)> ConnectedPairAsync()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var outer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        Task<Socket> accepted = listener.AcceptAsync();
        await outer.ConnectAsync(listener.LocalEndPoint!);
        return (outer, await accepted);
    }

    private static async Task<byte[]> ReadAsync(Socket socket, int count)
    {
        byte[] buffer = new byte[count];
        int read = 0;
        while (read < count)
        {
            int got = await socket.ReceiveAsync(buffer.AsMemory(read), SocketFlags.None).AsTask().WithTimeout();
            Assert.NotEqual(0, got);
            read += got;
        }

        return buffer;
    }

    private static async Task<byte[]> ReadToEndAsync(Socket socket)
    {
        using var all = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        int read;
        while ((read = await socket.ReceiveAsync(buffer, SocketFlags.None)) > 0)
        {
            all.Write(buffer, 0, read);
        }

        return all.ToArray();
    }

    private static byte[] RandomBytes(int length)
    {
        byte[] bytes = new byte[length];
        Random.Shared.NextBytes(bytes);
        return bytes;
    }

    /// <summary>A caller's socket relayed on the server's stream, a target's on the client's (with the TCP target relay's failure code).</summary>
    private sealed class Rig : IAsyncDisposable
    {
        private readonly UplinkPair _pair;
        private readonly Socket[] _sockets;
        private readonly UplinkStream _server;
        private readonly UplinkStream _client;

        private Rig(UplinkPair pair, Socket[] sockets, UplinkStream server, UplinkStream client)
        {
            _pair = pair;
            _sockets = sockets;
            _server = server;
            _client = client;
            ServerRelay = DuplexRelay.RunAsync(server, RelayEnd.OfSocket(sockets[1]));
            ClientRelay = DuplexRelay.RunAsync(client, RelayEnd.OfSocket(sockets[3]), ProtocolErrorCode.BackendAborted);
        }

        public Socket Caller => _sockets[0];

        public Socket Target => _sockets[2];

        public Task<DuplexRelayResult> ServerRelay { get; }

        public Task<DuplexRelayResult> ClientRelay { get; }

        public static async Task<Rig> StartAsync()
        {
            var pair = UplinkPair.Start();
            (Socket caller, Socket callerSide) = await ConnectedPairAsync();
            (Socket target, Socket targetSide) = await ConnectedPairAsync();
            (UplinkStream server, UplinkStream client) = await OpenTcpAsync(pair);
            return new Rig(pair, [caller, callerSide, target, targetSide], server, client);
        }

        public async ValueTask DisposeAsync()
        {
            foreach (Socket socket in _sockets)
            {
                socket.Dispose();
            }

            await Task.WhenAll(ServerRelay, ClientRelay).WaitAsync(TestTimeouts.Default);
            _server.Dispose();
            _client.Dispose();
            await _pair.DisposeAsync();
        }
    }
}
