using System.Buffers;
using System.Net.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp.LoopRelay;

/// <summary>
/// Issue 52 stage 2: the client's TCP targets on the event loop, against real target sockets: bytes intact both ways
/// over many streams at once, half-close each way, resets each way, a target that stops reading holding the stream's
/// window, an unreachable target, and the PROXY v2 header.
/// </summary>
[Collection(SerialCollection.Name)]
public sealed class LoopTargetRelayTests
{
    [Theory]
    [InlineData(20, 1 << 20)]
    [InlineData(1000, 2048)]
    public async Task Many_streams_at_once_carry_their_bytes_intact_both_ways(int streams, int size)
    {
        await using var harness = LoopRelayHarness.Start();
        Task echo = EchoTargetsAsync(harness, streams);

        byte[][] sent = new byte[streams][];
        var exchanges = new Task<byte[]>[streams];
        for (int i = 0; i < streams; i++)
        {
            sent[i] = Payload(size, seed: i);
            exchanges[i] = ExchangeAsync(harness.OpenStream(), sent[i]);
        }

        byte[][] received = await Task.WhenAll(exchanges).WaitAsync(TimeSpan.FromSeconds(120));
        await echo.WaitAsync(TimeSpan.FromSeconds(30));
        for (int i = 0; i < streams; i++)
        {
            Assert.True(sent[i].AsSpan().SequenceEqual(received[i]), $"stream {i} came back changed");
        }

        await harness.WaitForLineAsync("closed by both sides");
    }

    [Fact]
    public async Task The_callers_end_reaches_the_target_as_a_fin_while_the_target_still_answers()
    {
        await using var harness = LoopRelayHarness.Start();
        UplinkStream stream = harness.OpenStream();
        using Socket target = await harness.AcceptAsync();

        await stream.SendAsync(new ReadOnlySequence<byte>("QUIT\r\n"u8.ToArray()), endStream: true, CancellationToken.None);
        byte[] request = await ReadToEndAsync(target);
        await target.SendAsync("+OK bye\r\n"u8.ToArray());
        target.Shutdown(SocketShutdown.Send);

        Assert.Equal("QUIT\r\n"u8.ToArray(), request);
        Assert.Equal("+OK bye\r\n"u8.ToArray(), await stream.ReadAllAsync());
        stream.Dispose();
    }

    [Fact]
    public async Task The_targets_fin_ends_the_stream_upward_while_the_caller_still_sends()
    {
        await using var harness = LoopRelayHarness.Start();
        UplinkStream stream = harness.OpenStream();
        using Socket target = await harness.AcceptAsync();

        await target.SendAsync("banner\r\n"u8.ToArray());
        target.Shutdown(SocketShutdown.Send);
        byte[] down = await stream.ReadAllAsync();
        await stream.SendAsync(new ReadOnlySequence<byte>("late\r\n"u8.ToArray()), endStream: true, CancellationToken.None);

        Assert.Equal("banner\r\n"u8.ToArray(), down);
        Assert.Equal("late\r\n"u8.ToArray(), await ReadToEndAsync(target));
        stream.Dispose();
        await harness.WaitForLineAsync("closed by both sides");
    }

    [Fact]
    public async Task A_reset_from_the_server_cuts_the_target_with_a_reset_and_is_logged_with_its_code()
    {
        await using var harness = LoopRelayHarness.Start();
        UplinkStream stream = harness.OpenStream();
        using Socket target = await harness.AcceptAsync();
        await stream.SendAsync(new ReadOnlySequence<byte>("x"u8.ToArray()), endStream: false, CancellationToken.None);
        Assert.Equal(1, await target.ReceiveAsync(new byte[16].AsMemory()).AsTask().WithTimeout());

        stream.Reset(ProtocolErrorCode.IdleTimeout);

        var cut = await Assert.ThrowsAsync<SocketException>(async () => await ReadToEndAsync(target));
        Assert.Equal(SocketError.ConnectionReset, cut.SocketErrorCode);
        Assert.Contains("IdleTimeout", await harness.WaitForLineAsync("the server reset the stream"), StringComparison.Ordinal);
        stream.Dispose();
    }

    [Fact]
    public async Task A_target_that_resets_resets_the_stream_with_backend_aborted()
    {
        await using var harness = LoopRelayHarness.Start();
        UplinkStream stream = harness.OpenStream();
        Socket target = await harness.AcceptAsync();

        target.LingerState = new LingerOption(true, 0);
        target.Close();

        var reset = await Assert.ThrowsAsync<StreamResetException>(stream.ReadAllAsync);
        Assert.Equal(ProtocolErrorCode.BackendAborted, reset.ErrorCode);
        await harness.WaitForLineAsync("the target broke the connection");
        stream.Dispose();
    }

    [Fact]
    public async Task An_unreachable_target_resets_the_stream_with_backend_connect_failed()
    {
        // A port nobody listens on: bound, never listening, so a connect is refused.
        using var unused = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        unused.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        await using var harness = LoopRelayHarness.Start(target: $"127.0.0.1:{((System.Net.IPEndPoint)unused.LocalEndPoint!).Port}");
        UplinkStream stream = harness.OpenStream();

        var reset = await Assert.ThrowsAsync<StreamResetException>(stream.ReadAllAsync);
        Assert.Equal(ProtocolErrorCode.BackendConnectFailed, reset.ErrorCode);
        Assert.Contains("refused", await harness.WaitForLineAsync("unreachable"), StringComparison.Ordinal);
        stream.Dispose();
    }

    [Fact]
    public async Task A_target_named_by_host_is_resolved_off_the_loop()
    {
        await using var probe = LoopRelayHarness.Start();
        await using var harness = LoopRelayHarness.Start(target: $"localhost:{probe.Relay.TargetText.Split(':')[1]}");
        UplinkStream stream = harness.OpenStream();
        using Socket target = await probe.AcceptAsync();

        await target.SendAsync("hi"u8.ToArray());
        target.Shutdown(SocketShutdown.Send);
        await stream.SendAsync(ReadOnlySequence<byte>.Empty, endStream: true, CancellationToken.None);

        Assert.Equal("hi"u8.ToArray(), await stream.ReadAllAsync());
        stream.Dispose();
    }

    [Fact]
    public async Task The_proxy_header_goes_before_the_callers_bytes_and_costs_the_stream_no_credit()
    {
        await using var harness = LoopRelayHarness.Start(proxyProtocol: TcpClientOptions.ProxyProtocolV2);
        UplinkStream stream = harness.OpenStream();
        using Socket target = await harness.AcceptAsync();

        await stream.SendAsync(new ReadOnlySequence<byte>("PING\r\n"u8.ToArray()), endStream: true, CancellationToken.None);
        byte[] all = await ReadToEndAsync(target);
        target.Shutdown(SocketShutdown.Send);

        byte[] header = new byte[ProxyProtocolV2.LengthOf(LoopRelayHarness.Open)];
        ProxyProtocolV2.Write(LoopRelayHarness.Open, header);
        Assert.Equal([.. header, .. "PING\r\n"u8.ToArray()], all);
        Assert.Empty(await stream.ReadAllAsync());
        stream.Dispose();
        await harness.WaitForLineAsync("closed by both sides");
        Assert.Equal(0, harness.Pair.Client.ReceiveCreditOutstanding);
    }

    private static async Task<byte[]> ExchangeAsync(UplinkStream stream, byte[] payload)
    {
        Task<byte[]> back = stream.ReadAllAsync();
        await stream.SendAsync(new ReadOnlySequence<byte>(payload), endStream: true, CancellationToken.None);
        byte[] received = await back;
        stream.Dispose();
        return received;
    }

    /// <summary>Each of <paramref name="count"/> target connections echoes what it gets, then ends after the caller's end.</summary>
    private static Task EchoTargetsAsync(LoopRelayHarness harness, int count) => EchoTargetsAsync(harness.AcceptAsync, count);

    internal static async Task EchoTargetsAsync(Func<Task<Socket>> accept, int count)
    {
        var echoes = new List<Task>(count);
        for (int i = 0; i < count; i++)
        {
            echoes.Add(EchoAsync(await accept()));
        }

        await Task.WhenAll(echoes);
    }

    internal static async Task EchoAsync(Socket socket)
    {
        using (socket)
        {
            byte[] buffer = new byte[64 * 1024];
            int n;
            while ((n = await socket.ReceiveAsync(buffer)) > 0)
            {
                await socket.SendAsync(buffer.AsMemory(0, n));
            }

            socket.Shutdown(SocketShutdown.Send);
        }
    }

    internal static async Task<byte[]> ReadToEndAsync(Socket socket)
    {
        using var all = new MemoryStream();
        byte[] buffer = new byte[64 * 1024];
        int n;
        while ((n = await socket.ReceiveAsync(buffer.AsMemory()).AsTask().WaitAsync(TimeSpan.FromSeconds(30))) > 0)
        {
            all.Write(buffer, 0, n);
        }

        return all.ToArray();
    }

    internal static byte[] Payload(int size, int seed)
    {
        byte[] bytes = new byte[size];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }
}
