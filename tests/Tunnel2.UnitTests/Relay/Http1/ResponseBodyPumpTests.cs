using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Inspection;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.UnitTests.Infrastructure;
using Tunnel2.UnitTests.Multiplexing;

namespace Tunnel2.UnitTests.Relay.Http1;

/// <summary>
/// The backend's response, read off a pipe and pumped up a real client-role stream to a real server-role uplink
/// (in-memory pipes, small windows): what arrives at the server is exactly the body, whatever the framing.
/// </summary>
public sealed class ResponseBodyPumpTests
{
    private static readonly UplinkSettings SmallWindows = new() { InitialStreamWindow = 16 * 1024, MaxFramePayload = 16 * 1024 };

    [Theory]
    [InlineData(1)]
    [InlineData(10)]
    [InlineData(300_000)]
    public async Task A_Content_Length_body_arrives_intact_and_the_next_response_stays_in_the_pipe(int length)
    {
        byte[] body = StreamExchangeTests.Pattern(length, seed: length);
        byte[] raw = Concat(Http1Backend.Bytes($"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\n"), body, Http1Backend.Bytes("HTTP/1.1 204 No Content\r\n\r\n"));

        Relayed relayed = await RelayAsync(raw, pieceSize: 7_001);

        Assert.Equal(200, relayed.Head.StatusCode);
        Assert.Equal(body, relayed.Body);
        Assert.Equal(204, relayed.Next?.StatusCode);
    }

    [Fact]
    public async Task A_chunked_body_with_extensions_and_trailers_arrives_without_its_framing()
    {
        const string Raw =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n"
            + "5;name=value\r\nhello\r\n"
            + "1 ; quoted=\"a;b\"\r\n,\r\n"
            + "A\r\n0123456789\r\n"
            + "00000006\r\n world\r\n"
            + "a\r\nabcdefghij\r\n"
            + "0;last\r\nX-Checksum: 123\r\nX-Other: 4\r\n\r\n"
            + "HTTP/1.1 204 No Content\r\n\r\n";

        foreach (int pieceSize in new[] { 1, 2, 3, 5, 16, 1000 })
        {
            Relayed relayed = await RelayAsync(Http1Backend.Bytes(Raw), pieceSize);

            Assert.Equal("hello,0123456789 worldabcdefghij", Encoding.Latin1.GetString(relayed.Body));
            Assert.DoesNotContain(relayed.Head.Headers, h => h.Name is "Trailer" or "Transfer-Encoding" or "X-Checksum");
            Assert.Equal(204, relayed.Next?.StatusCode);
        }
    }

    [Fact]
    public async Task A_chunked_body_larger_than_the_window_arrives_intact()
    {
        byte[] body = StreamExchangeTests.Pattern(250_000, seed: 11);
        var raw = new MemoryStream();
        raw.Write(Http1Backend.Bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"));
        foreach ((int offset, int size) in new[] { (0, 100_000), (100_000, 1), (100_001, 149_999) })
        {
            raw.Write(Http1Backend.Bytes($"{size:x}\r\n"));
            raw.Write(body, offset, size);
            raw.Write("\r\n"u8);
        }

        raw.Write("0\r\n\r\n"u8);

        Relayed relayed = await RelayAsync(raw.ToArray(), pieceSize: 4_096);

        Assert.Equal(body, relayed.Body);
    }

    [Fact]
    public async Task A_body_without_length_runs_until_the_backend_closes()
    {
        byte[] body = StreamExchangeTests.Pattern(100_000, seed: 12);

        Relayed relayed = await RelayAsync(Concat(Http1Backend.Bytes("HTTP/1.0 200 OK\r\n\r\n"), body), pieceSize: 9_999, complete: true);

        Assert.Equal(body, relayed.Body);
        Assert.Null(relayed.Next);
    }

    [Fact]
    public async Task A_Content_Length_body_cut_short_is_IOException()
    {
        byte[] raw = Http1Backend.Bytes("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");

        await Assert.ThrowsAsync<IOException>(() => RelayAsync(raw, complete: true));
    }

    [Theory]
    [InlineData("5\r\nhel")]
    [InlineData("5\r\nhello\r\n")]
    [InlineData("5\r\nhello\r\n0\r\n")]
    [InlineData("5\r\nhello\r\n0\r\nX-Trailer: 1\r\n")]
    public async Task A_chunked_body_cut_short_is_IOException(string chunks)
    {
        byte[] raw = Http1Backend.Bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks);

        await Assert.ThrowsAsync<IOException>(() => RelayAsync(raw, complete: true));
    }

    [Theory]
    [InlineData("xyz\r\n")]
    [InlineData("\r\n")]
    [InlineData("-5\r\n")]
    [InlineData("+5\r\n")]
    [InlineData("FFFFFFFFFFFFFFFF\r\n")]
    [InlineData("10000000000000000\r\n")]
    [InlineData("5\r\nhelloXX\r\n")]
    public async Task A_malformed_chunk_is_InvalidDataException(string chunks)
    {
        byte[] raw = Http1Backend.Bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + "0\r\n\r\n");

        await Assert.ThrowsAsync<InvalidDataException>(() => RelayAsync(raw, complete: true));
    }

    [Fact]
    public async Task An_endless_chunk_size_line_is_InvalidDataException()
    {
        byte[] raw = Http1Backend.Bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + new string('1', 5_000));

        await Assert.ThrowsAsync<InvalidDataException>(() => RelayAsync(raw, pieceSize: 1_000));
    }

    private sealed record Relayed(ResponseHead Head, byte[] Body, BackendResponseHead? Next);

    /// <summary>
    /// Feeds the raw backend bytes into a pipe, reads the head and pumps the body up a client stream, and returns what
    /// the server received, plus the next head left on the backend connection (null if it closed).
    /// </summary>
    private static async Task<Relayed> RelayAsync(byte[] raw, int pieceSize = int.MaxValue, bool complete = false)
    {
        await using var pair = UplinkPair.Start(SmallWindows);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("GET", "/", []), endStream: true);
        var backend = new Pipe();
        Task feed = Http1Backend.WriteAsync(backend.Writer, raw, pieceSize, complete);
        Task<byte[]> received = ReceiveAsync(server);

        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(backend.Reader, isHeadRequest: false, CancellationToken.None).AsTask().WithTimeout();
        Assert.NotNull(head);
        Assert.NotEqual(BodyFraming.None, head.Framing);
        client.SendResponseHead(new ResponseHead(head.StatusCode, head.Headers), endStream: false);
        var tap = new BodyCapture(limit: 1024 * 1024); // the inspector's tap: sees the body as sent, chunk framing gone
        await ResponseBodyPump.SendAsync(client, backend.Reader, backend.Reader.AsStream(leaveOpen: true), head, tap, CancellationToken.None).WithTimeout();

        byte[] body = await received.WithTimeout();
        Assert.Equal(body, tap.Freeze()?.Bytes ?? []);
        await feed.WithTimeout();
        BackendResponseHead? next = null;
        if (!complete)
        {
            await backend.Writer.CompleteAsync();
            next = await ResponseHeadReader.ReadAsync(backend.Reader, isHeadRequest: false, CancellationToken.None).AsTask().WithTimeout();
        }

        return new Relayed(await server.ReadResponseHeadAsync(), body, next);

        static async Task<byte[]> ReceiveAsync(UplinkStream server)
        {
            await server.ReadResponseHeadAsync().WithTimeout();
            return await server.ReadAllAsync();
        }
    }

    private static byte[] Concat(params byte[][] parts) => FrameBytes.Concat(parts);
}
