using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.UnitTests.Infrastructure;
using Tunnel2.UnitTests.Tcp.LoopRelay;

namespace Tunnel2.UnitTests.Uplinks.OnLoop;

/// <summary>
/// A plain login on the server's loop (issue 52, stage 3b), over real loopback sockets: the head is read through the
/// loop's readiness with non-blocking reads, the 101 or the refusal written non-blocking, and the uplink then runs on
/// the loop, whose epoll set alone watches its socket.
/// </summary>
public sealed class LoopLoginTests
{
    private const string HeadEnd = "\r\n\r\n";

    [Fact]
    public async Task A_plain_login_runs_its_uplink_on_the_loop_whose_set_alone_watches_its_socket()
    {
        await using LoginPort port = LoginPort.Start();
        using Socket client = port.Connect();

        // The head and a first frame in one send: the frame is what the handshake read past the head.
        client.Send([.. Encoding.ASCII.GetBytes(LoginPort.Login("on-loop")), .. Ping(0x5EED)]);

        string head = await ReadHeadAsync(client);
        Assert.StartsWith("HTTP/1.1 101 ", head, StringComparison.Ordinal);
        Assert.Equal(0x5EEDUL, await ReadPongAsync(client));
        Uplink uplink = Assert.Single(port.Registry.GetUplinks("on-loop"));
        Assert.True(uplink.IsOnLoop);
        Assert.Equal(1, port.Probe.Uplinks);

        // One set, the loop's: a login read by async calls on the runtime's sockets would be in its set as well.
        Assert.Equal(1, EpollSets.Watching(port.Port, ((IPEndPoint)client.LocalEndPoint!).Port));
        client.Send(Ping(0xF00D)); // read by the loop, past the handshake
        Assert.Equal(0xF00DUL, await ReadPongAsync(client));
    }

    [Fact]
    public async Task With_the_sockets_engine_the_uplink_stays_on_the_runtimes_sockets()
    {
        await using LoginPort port = LoginPort.Start(engine: ServerUplinkOptions.EngineSockets);
        using Socket client = port.Connect();

        client.Send([.. Encoding.ASCII.GetBytes(LoginPort.Login("on-sockets")), .. Ping(7)]);

        Assert.StartsWith("HTTP/1.1 101 ", await ReadHeadAsync(client), StringComparison.Ordinal);
        Assert.Equal(7UL, await ReadPongAsync(client));
        Assert.False(Assert.Single(port.Registry.GetUplinks("on-sockets")).IsOnLoop);
        Assert.Null(port.Loop);
    }

    [Fact]
    public async Task A_wrong_token_read_on_the_loop_is_answered_401_and_closed()
    {
        await using LoginPort port = LoginPort.Start();
        using Socket client = port.Connect();

        client.Send(Encoding.ASCII.GetBytes(LoginPort.Login("refused", token: "wrong")));

        string answer = await ReadToEndAsync(client);
        Assert.StartsWith("HTTP/1.1 401 Unauthorized\r\n", answer, StringComparison.Ordinal);
        Assert.Contains("\"type\":\"urn:tunnel2:problem:bad-token\"", answer, StringComparison.Ordinal);
        Assert.Equal(["bad-token"], port.Probe.Refused);
        Assert.Empty(port.Registry.GetAllUplinks());
    }

    [Fact]
    public async Task A_head_split_over_several_segments_is_read_on_the_loop()
    {
        await using LoginPort port = LoginPort.Start();
        using Socket client = port.Connect();
        byte[] login = Encoding.ASCII.GetBytes(LoginPort.Login("split"));

        foreach (byte[] piece in (byte[][])[login[..5], login[5..40], login[40..^1], [.. login[^1..], .. Ping(42)]])
        {
            client.Send(piece);
            await Task.Delay(20); // separate segments, not a synchronisation: the server must wait for each
        }

        Assert.StartsWith("HTTP/1.1 101 ", await ReadHeadAsync(client), StringComparison.Ordinal);
        Assert.Equal(42UL, await ReadPongAsync(client));
        Assert.True(Assert.Single(port.Registry.GetUplinks("split")).IsOnLoop);
    }

    [Fact]
    public async Task A_thousand_silent_logins_wait_on_the_loop_without_threads_and_get_408_at_the_timeout()
    {
        const int Logins = 1000;
        await using LoginPort port = LoginPort.Start(handshakeTimeout: TimeSpan.FromSeconds(6));
        int threadsBefore = ThreadPool.ThreadCount;
        var clients = new Socket[Logins];
        try
        {
            for (int i = 0; i < Logins; i++)
            {
                clients[i] = port.Connect();
            }

            // Every one of them waits in the loop's epoll set, none on a thread of its own.
            await Eventually.WaitUntilAsync(() => port.Loop is { RegisteredCount: >= Logins }, "every silent login waits on the loop");
            Assert.True(ThreadPool.ThreadCount < threadsBefore + 100, $"{ThreadPool.ThreadCount - threadsBefore} more pool threads for {Logins} silent logins");

            string[] answers = await Task.WhenAll(clients.Select(ReadToEndAsync)).WaitAsync(TimeSpan.FromSeconds(60));
            Assert.All(answers, answer => Assert.StartsWith("HTTP/1.1 408 Request Timeout\r\n", answer, StringComparison.Ordinal));
            Assert.Equal(Logins, port.Probe.Refused.Count(reason => reason == "handshake-timeout"));
        }
        finally
        {
            foreach (Socket? client in clients)
            {
                client?.Dispose();
            }
        }
    }

    [Fact]
    public async Task A_login_that_vanishes_mid_head_ends_without_an_answer_or_an_uplink()
    {
        await using LoginPort port = LoginPort.Start();
        using (Socket client = port.Connect())
        {
            client.Send(Encoding.ASCII.GetBytes(LoginPort.Login("gone")[..30]));
            await Eventually.WaitUntilAsync(() => port.Loop is { RegisteredCount: >= 1 }, "the login waits on the loop");
            client.LingerState = new LingerOption(true, 0); // a reset
        }

        await Eventually.WaitUntilAsync(() => port.Loop is { RegisteredCount: 0 }, "the vanished login leaves the loop's set");
        Assert.Empty(port.Registry.GetAllUplinks());
        Assert.Equal(0, port.Probe.Uplinks);
    }

    [Fact]
    public async Task A_port_probe_that_connects_and_closes_is_not_refused()
    {
        await using LoginPort port = LoginPort.Start();
        using (port.Connect())
        {
        }

        using Socket next = port.Connect(); // the port goes on serving
        next.Send([.. Encoding.ASCII.GetBytes(LoginPort.Login("after-probe")), .. Ping(1)]);
        Assert.StartsWith("HTTP/1.1 101 ", await ReadHeadAsync(next), StringComparison.Ordinal);
        Assert.Equal(1UL, await ReadPongAsync(next));
        Assert.Empty(port.Probe.Refused);
    }

    private static byte[] Ping(ulong opaque)
    {
        byte[] frame = new byte[FrameHeader.Size + 8];
        new FrameHeader(8, FrameType.Ping, FrameFlags.None, 0).WriteTo(frame);
        BinaryPrimitives.WriteUInt64BigEndian(frame.AsSpan(FrameHeader.Size), opaque);
        return frame;
    }

    /// <summary>Reads the answer's head, byte by byte, so that the frames after it stay in the socket.</summary>
    private static async Task<string> ReadHeadAsync(Socket client)
    {
        var head = new StringBuilder();
        byte[] one = new byte[1];
        while (!head.ToString().EndsWith(HeadEnd, StringComparison.Ordinal))
        {
            Assert.Equal(1, await client.ReceiveAsync(one, SocketFlags.None).WithTimeout());
            head.Append((char)one[0]);
        }

        return head.ToString();
    }

    /// <summary>The next Pong's opaque value, past any other frame.</summary>
    private static async Task<ulong> ReadPongAsync(Socket client)
    {
        while (true)
        {
            byte[] header = await ReadExactlyAsync(client, FrameHeader.Size);
            FrameHeader frame = FrameHeader.ReadFrom(header);
            byte[] payload = await ReadExactlyAsync(client, frame.PayloadLength);
            if (frame.Type == FrameType.Pong)
            {
                return BinaryPrimitives.ReadUInt64BigEndian(payload);
            }
        }
    }

    private static async Task<byte[]> ReadExactlyAsync(Socket client, int length)
    {
        byte[] bytes = new byte[length];
        int read = 0;
        while (read < length)
        {
            int n = await client.ReceiveAsync(bytes.AsMemory(read), SocketFlags.None).WithTimeout();
            Assert.True(n > 0, "the server closed the connection");
            read += n;
        }

        return bytes;
    }

    private static async Task<string> ReadToEndAsync(Socket client)
    {
        using var stream = new NetworkStream(client, ownsSocket: false);
        using var reader = new StreamReader(stream, Encoding.ASCII);
        return await reader.ReadToEndAsync().WaitAsync(TimeSpan.FromSeconds(60));
    }
}
