using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.OnLoop;
using Tunnel2.UnitTests.Infrastructure;
using Tunnel2.UnitTests.Loops;
using Tunnel2.UnitTests.Multiplexing;

namespace Tunnel2.UnitTests.Relay.OnLoop;

/// <summary>
/// A backend's response body read on the client's loop in reads of several frames (<see cref="LoopBodyReads"/>), pumped
/// up a real client stream with small windows: it arrives whole, its framing's end is kept (a Content-Length body is read
/// to its last byte and not past it, though the next response waits in the socket behind it, so the connection can serve
/// the next exchange), and a body that runs until the backend closes ends with it.
/// </summary>
public sealed class LoopBodyReadsTests : IDisposable
{
    private static readonly UplinkSettings SmallWindows = new() { InitialStreamWindow = 16 * 1024, MaxFramePayload = 16 * 1024 };
    private readonly LoopHarness _harness = new("client-loop-test");
    private readonly Socket _listener = LoopHarness.Listening();

    public void Dispose()
    {
        _listener.Dispose();
        _harness.Dispose();
    }

    [Theory]
    [InlineData(20_000)] // the head's read takes 16 KiB of it: the pipe's bytes go first, then the socket's
    [InlineData(70_000)]
    [InlineData(3_000_000)]
    public async Task A_Content_Length_body_arrives_whole_and_the_next_response_is_still_on_the_connection(int length)
    {
        byte[] body = StreamExchangeTests.Pattern(length, seed: length);
        byte[] raw = FrameBytes.Concat(Ascii($"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\n"), body, Ascii("HTTP/1.1 204 No Content\r\n\r\n"));

        (byte[] received, BackendConnection connection, Socket backend) = await RelayOnLoopAsync(raw, closeAfter: false);
        await using (connection)
        using (backend)
        {
            Assert.Equal(body, received);
            Assert.Null(connection.CheckNothingBuffered());
            BackendResponseHead? next = await ResponseHeadReader.ReadAsync(connection.Input, isHeadRequest: false, CancellationToken.None).AsTask().WithTimeout();
            Assert.Equal(204, next?.StatusCode);
        }
    }

    [Fact]
    public async Task A_body_without_length_ends_when_the_backend_closes()
    {
        byte[] body = StreamExchangeTests.Pattern(2_000_000, seed: 9);

        (byte[] received, BackendConnection connection, Socket backend) = await RelayOnLoopAsync(FrameBytes.Concat(Ascii("HTTP/1.0 200 OK\r\n\r\n"), body), closeAfter: true);
        await using (connection)
        using (backend)
        {
            Assert.Equal(body, received);
        }
    }

    /// <summary>The backend sends <paramref name="raw"/> on a connection on the loop; the head is read, the body pumped from the loop.</summary>
    private async Task<(byte[] Received, BackendConnection Connection, Socket Backend)> RelayOnLoopAsync(byte[] raw, bool closeAfter)
    {
        var dialer = new LoopBackendDialer(_harness.Loop, new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndPoint!).Port}"));
        Task<Socket> accepted = _listener.AcceptAsync();
        BackendConnection connection = await BackendConnection.ConnectOnLoopAsync(dialer, LoopHarness.Timeout, 0, static () => false, CancellationToken.None).WaitAsync(LoopHarness.Timeout);
        Socket backend = await accepted.WaitAsync(LoopHarness.Timeout);
        await using var pair = UplinkPair.Start(SmallWindows);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);
        Task feed = FeedAsync(backend, raw, closeAfter);
        Task<byte[]> received = ReceiveAsync(server);

        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(connection.Input, isHeadRequest: false, CancellationToken.None).AsTask().WithTimeout();
        Assert.NotNull(head);
        client.SendResponseHead(new ResponseHead(head.StatusCode, head.Headers), endStream: false);
        Task pump = await _harness.OnLoopAsync(() => ResponseBodyPump.SendAsync(client, connection.Input, connection.Stream, head, tap: null, CancellationToken.None));
        await pump.WithTimeout();

        byte[] body = await received.WithTimeout();
        await feed.WithTimeout();
        Assert.Empty(_harness.Faults);
        return (body, connection, backend);
    }

    private static async Task FeedAsync(Socket backend, byte[] raw, bool closeAfter)
    {
        await backend.SendAsync(raw);
        if (closeAfter)
        {
            backend.Shutdown(SocketShutdown.Send);
        }
    }

    private static async Task<byte[]> ReceiveAsync(UplinkStream server)
    {
        await server.ReadResponseHeadAsync().WithTimeout();
        return await server.ReadAllAsync();
    }

    private static byte[] Ascii(string text) => Encoding.ASCII.GetBytes(text);
}
