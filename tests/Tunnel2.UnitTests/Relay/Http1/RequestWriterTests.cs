using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.UnitTests.Infrastructure;
using Tunnel2.UnitTests.Multiplexing;

namespace Tunnel2.UnitTests.Relay.Http1;

public sealed class RequestWriterTests
{
    private static async Task<string> WrittenAsync(Pipe pipe)
    {
        await pipe.Writer.CompleteAsync();
        return Http1Backend.Rest(pipe.Reader);
    }

    [Fact]
    public async Task Writes_the_request_line_the_backends_host_and_the_headers_in_order()
    {
        var pipe = new Pipe();
        var head = new RequestHead("GET", "/a%20b?c=d", [new("Host", "public.example"), new("Accept", "*/*"), new("X-Multi", "1"), new("X-Multi", "2")]);

        bool chunked = RequestWriter.WriteHead(pipe.Writer, head, "127.0.0.1:12007", hasBody: false);

        Assert.False(chunked);
        Assert.Equal("GET /a%20b?c=d HTTP/1.1\r\nHost: 127.0.0.1:12007\r\nAccept: */*\r\nX-Multi: 1\r\nX-Multi: 2\r\n\r\n", await WrittenAsync(pipe));
    }

    [Fact]
    public async Task A_body_with_a_length_goes_as_is()
    {
        var pipe = new Pipe();

        bool chunked = RequestWriter.WriteHead(pipe.Writer, new RequestHead("POST", "/", [new("Content-Length", "5")]), "b", hasBody: true);

        Assert.False(chunked);
        Assert.DoesNotContain("Transfer-Encoding", await WrittenAsync(pipe), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_body_without_a_length_goes_chunked_and_a_forwarded_Transfer_Encoding_is_not_repeated()
    {
        var pipe = new Pipe();

        bool chunked = RequestWriter.WriteHead(pipe.Writer, new RequestHead("POST", "/", [new("Transfer-Encoding", "chunked")]), "b", hasBody: true);

        Assert.True(chunked);
        Assert.Equal("POST / HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n", await WrittenAsync(pipe));
    }

    [Fact]
    public async Task Non_ascii_header_values_are_written_as_utf8()
    {
        var pipe = new Pipe();

        RequestWriter.WriteHead(pipe.Writer, new RequestHead("GET", "/", [new("X-U", "✓")]), "b", hasBody: false);
        await pipe.Writer.CompleteAsync();

        Assert.True(pipe.Reader.TryRead(out ReadResult result));
        Assert.Contains("X-U: ✓\r\n", Encoding.UTF8.GetString(result.Buffer), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task The_streamed_body_reaches_the_backend_in_its_framing(bool chunked)
    {
        await using var pair = UplinkPair.Start(new UplinkSettings { InitialStreamWindow = 16 * 1024, MaxFramePayload = 16 * 1024 });
        byte[] body = StreamExchangeTests.Pattern(100_000, seed: 31);
        UplinkStream server = pair.Server.OpenStreamOrFail(new RequestHead("POST", "/", []), endStream: false);
        Task send = server.SendBodyAsync(PipeReader.Create(new MemoryStream(body)), CancellationToken.None);
        UplinkStream client = await pair.Handler.NextAsync();
        var backend = new Pipe(new PipeOptions(pauseWriterThreshold: 0));

        await client.CopyInputToAsync(backend.Writer, chunked, CancellationToken.None).WithTimeout();
        await send.WithTimeout();
        await backend.Writer.CompleteAsync();

        Assert.True(backend.Reader.TryRead(out ReadResult result));
        byte[] written = System.Buffers.BuffersExtensions.ToArray(result.Buffer);
        Assert.Equal(body, chunked ? Dechunk(written) : written);
        if (chunked)
        {
            Assert.EndsWith("\r\n0\r\n\r\n", Encoding.Latin1.GetString(written), StringComparison.Ordinal);
        }
    }

    /// <summary>Decodes a chunked body, checking its framing on the way.</summary>
    private static byte[] Dechunk(byte[] chunked)
    {
        var body = new MemoryStream();
        int position = 0;
        while (true)
        {
            int lineEnd = Array.IndexOf(chunked, (byte)'\n', position);
            Assert.True(lineEnd > position && chunked[lineEnd - 1] == '\r', "chunk size line must end with CRLF");
            int size = Convert.ToInt32(Encoding.ASCII.GetString(chunked, position, lineEnd - 1 - position), 16);
            position = lineEnd + 1;
            if (size == 0)
            {
                Assert.Equal("\r\n", Encoding.ASCII.GetString(chunked, position, chunked.Length - position));
                return body.ToArray();
            }

            body.Write(chunked, position, size);
            position += size;
            Assert.Equal("\r\n", Encoding.ASCII.GetString(chunked, position, 2));
            position += 2;
        }
    }

    [Theory]
    [InlineData("Transfer-Encoding\u000b")]
    [InlineData("X\u0001a")]
    [InlineData("X(a)")]
    [InlineData("X a")]
    [InlineData("X:a")]
    [InlineData("X\u00e9")]
    [InlineData("")]
    public void A_header_name_outside_token_is_never_written(string name)
    {
        var pipe = new Pipe();
        var head = new RequestHead("GET", "/", [new("Accept", "*/*"), new(name, "chunked")]);

        Assert.Throws<InvalidDataException>(() => RequestWriter.WriteHead(pipe.Writer, head, "b", hasBody: false));
        Assert.Equal(0, pipe.Writer.UnflushedBytes);
    }

    [Theory]
    [InlineData("a\r\nX-Injected: 1")]
    [InlineData("a\nb")]
    [InlineData("a\u0000b")]
    public void A_value_that_would_break_the_line_is_never_written(string value)
    {
        var pipe = new Pipe();

        Assert.Throws<InvalidDataException>(() => RequestWriter.WriteHead(pipe.Writer, new RequestHead("GET", "/", [new("X-Value", value)]), "b", hasBody: false));
        Assert.Equal(0, pipe.Writer.UnflushedBytes);
    }

    [Theory]
    [InlineData("G ET", "/")]
    [InlineData("GET", "/a b")]
    [InlineData("GET", "/a\r\nX: 1")]
    [InlineData("GET", "no-slash")]
    public void A_request_line_that_would_not_parse_as_one_is_never_written(string method, string target)
    {
        var pipe = new Pipe();

        Assert.Throws<InvalidDataException>(() => RequestWriter.WriteHead(pipe.Writer, new RequestHead(method, target, []), "b", hasBody: false));
        Assert.Equal(0, pipe.Writer.UnflushedBytes);
    }

    [Fact]
    public async Task An_upgrade_request_gets_Connection_Upgrade_beside_its_Upgrade_field_and_no_body_framing()
    {
        var pipe = new Pipe();
        var head = new RequestHead("GET", "/ws", [new("Upgrade", "websocket"), new("Sec-WebSocket-Key", "k==")]);

        bool chunked = RequestWriter.WriteHead(pipe.Writer, head, "b", hasBody: false, upgrade: true);

        Assert.False(chunked);
        Assert.Equal("GET /ws HTTP/1.1\r\nHost: b\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k==\r\nConnection: Upgrade\r\n\r\n", await WrittenAsync(pipe));
    }
}
