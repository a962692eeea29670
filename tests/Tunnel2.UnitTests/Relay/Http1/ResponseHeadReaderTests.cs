using System.IO.Pipelines;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Http1;

public sealed class ResponseHeadReaderTests
{
    private static async Task<BackendResponseHead> ReadAsync(string raw, bool isHeadRequest = false)
    {
        PipeReader reader = await Http1Backend.WithAsync(raw);
        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(reader, isHeadRequest, CancellationToken.None).AsTask().WithTimeout();
        Assert.NotNull(head);
        return head;
    }

    private static string? Header(BackendResponseHead head, string name) =>
        head.Headers.Where(h => string.Equals(h.Name, name, StringComparison.OrdinalIgnoreCase)).Select(h => h.Value).SingleOrDefault();

    [Fact]
    public async Task A_200_with_Content_Length_leaves_the_body_in_the_pipe()
    {
        PipeReader reader = await Http1Backend.WithAsync("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello", complete: true);

        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None);

        Assert.NotNull(head);
        Assert.Equal(200, head.StatusCode);
        Assert.Equal(BodyFraming.ContentLength, head.Framing);
        Assert.Equal(5, head.ContentLength);
        Assert.True(head.KeepAlive);
        Assert.Equal([new HeaderField("Content-Type", "text/plain"), new HeaderField("Content-Length", "5")], head.Headers);
        Assert.Equal("hello", Http1Backend.Rest(reader));
    }

    [Fact]
    public async Task Chunked_framing_drops_Transfer_Encoding_from_the_headers()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\n\r\n");

        Assert.Equal(BodyFraming.Chunked, head.Framing);
        Assert.True(head.KeepAlive);
        Assert.Null(Header(head, "Transfer-Encoding"));
        Assert.Equal("a/b", Header(head, "Content-Type"));
    }

    [Theory]
    [InlineData("Transfer-Encoding: chunked\r\nContent-Length: 10\r\n")]
    [InlineData("Content-Length: 10\r\nTransfer-Encoding: chunked\r\n")]
    [InlineData("Content-Length: 10\r\nTransfer-Encoding: gzip, chunked\r\n")]
    public async Task Transfer_Encoding_with_Content_Length_is_chunked_and_drops_the_length(string headers)
    {
        BackendResponseHead head = await ReadAsync($"HTTP/1.1 200 OK\r\n{headers}\r\n");

        Assert.Equal(BodyFraming.Chunked, head.Framing);
        Assert.Null(Header(head, "Content-Length"));
        Assert.Null(Header(head, "Transfer-Encoding"));
    }

    [Theory]
    [InlineData("HTTP/1.1 204 No Content\r\n\r\n")]
    [InlineData("HTTP/1.1 304 Not Modified\r\nContent-Length: 120\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")]
    public async Task Responses_without_a_body_have_no_framing(string raw)
    {
        BackendResponseHead head = await ReadAsync(raw);

        Assert.Equal(BodyFraming.None, head.Framing);
        Assert.True(head.KeepAlive);
    }

    [Fact]
    public async Task A_304_keeps_its_Content_Length_header()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 304 Not Modified\r\nContent-Length: 120\r\n\r\n");

        Assert.Equal("120", Header(head, "Content-Length"));
    }

    [Fact]
    public async Task The_answer_to_HEAD_has_no_body_but_keeps_its_length()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", isHeadRequest: true);

        Assert.Equal(BodyFraming.None, head.Framing);
        Assert.Equal(1234, head.ContentLength);
        Assert.Equal("1234", Header(head, "Content-Length"));
        Assert.True(head.KeepAlive);
    }

    [Fact]
    public async Task The_answer_to_HEAD_with_chunked_encoding_has_no_body_either()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", isHeadRequest: true);

        Assert.Equal(BodyFraming.None, head.Framing);
    }

    [Fact]
    public async Task HTTP_1_0_without_keep_alive_closes_the_connection()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n");

        Assert.Equal(BodyFraming.ContentLength, head.Framing);
        Assert.False(head.KeepAlive);
    }

    [Fact]
    public async Task HTTP_1_0_with_keep_alive_keeps_it_and_drops_the_Connection_header()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 3\r\n\r\n");

        Assert.True(head.KeepAlive);
        Assert.Null(Header(head, "Connection"));
        Assert.Null(Header(head, "Keep-Alive"));
    }

    [Theory]
    [InlineData("HTTP/1.0 200 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\n\r\n")]
    [InlineData("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n")]
    public async Task Without_length_or_chunking_the_body_runs_until_close(string raw)
    {
        BackendResponseHead head = await ReadAsync(raw);

        Assert.Equal(BodyFraming.UntilClose, head.Framing);
        Assert.False(head.KeepAlive);
    }

    [Theory]
    [InlineData("Connection: close\r\n")]
    [InlineData("Connection: CLOSE\r\n")]
    [InlineData("Connection: upgrade, close\r\n")]
    [InlineData("Connection: x\r\nConnection: close\r\n")]
    public async Task Connection_close_ends_keep_alive(string connection)
    {
        BackendResponseHead head = await ReadAsync($"HTTP/1.1 200 OK\r\n{connection}Content-Length: 1\r\n\r\n");

        Assert.False(head.KeepAlive);
        Assert.Null(Header(head, "Connection"));
    }

    [Fact]
    public async Task Headers_named_by_Connection_are_removed()
    {
        BackendResponseHead head = await ReadAsync(
            "HTTP/1.1 200 OK\r\nConnection: X-Secret, x-other\r\nX-Secret: 1\r\nX-Public: 2\r\nX-Other: 3\r\nConnection: X-Third\r\nX-Third: 4\r\nContent-Length: 0\r\n\r\n");

        Assert.Equal([new HeaderField("X-Public", "2"), new HeaderField("Content-Length", "0")], head.Headers);
        Assert.True(head.KeepAlive);
    }

    [Fact]
    public async Task Hop_by_hop_headers_are_removed()
    {
        BackendResponseHead head = await ReadAsync(
            "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nUpgrade: h2c\r\nProxy-Connection: keep-alive\r\nProxy-Authenticate: Basic\r\nTrailer: X-T\r\nTE: trailers\r\nX-Kept: yes\r\nContent-Length: 0\r\n\r\n");

        Assert.Equal([new HeaderField("X-Kept", "yes"), new HeaderField("Content-Length", "0")], head.Headers);
    }

    [Fact]
    public async Task Repeated_headers_keep_their_order_and_values_are_trimmed()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie:b=2   \r\nX-Spaced:    v  \r\nContent-Length: 0\r\n\r\n");

        Assert.Equal(
            [new HeaderField("Set-Cookie", "a=1"), new HeaderField("Set-Cookie", "b=2"), new HeaderField("X-Spaced", "v"), new HeaderField("Content-Length", "0")],
            head.Headers);
    }

    [Fact]
    public async Task A_100_Continue_is_skipped_for_the_final_answer()
    {
        PipeReader reader = await Http1Backend.WithAsync("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", complete: true);

        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None);

        Assert.NotNull(head);
        Assert.Equal(200, head.StatusCode);
        Assert.Equal("ok", Http1Backend.Rest(reader));
    }

    [Fact]
    public async Task Interim_answers_arriving_first_are_skipped_while_waiting_for_the_final_one()
    {
        var pipe = new Pipe();
        await Http1Backend.WriteAsync(pipe.Writer, Http1Backend.Bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"));

        Task<BackendResponseHead?> reading = ResponseHeadReader.ReadAsync(pipe.Reader, false, CancellationToken.None).AsTask();
        Assert.False(reading.IsCompleted); // interim answers alone never complete the read
        await Http1Backend.WriteAsync(pipe.Writer, Http1Backend.Bytes("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"));

        BackendResponseHead? head = await reading.WithTimeout();
        Assert.NotNull(head);
        Assert.Equal(201, head.StatusCode);
        Assert.Null(Header(head, "Link"));
    }

    [Fact]
    public async Task A_head_written_one_byte_at_a_time_is_read_whole()
    {
        var pipe = new Pipe();
        Task write = Http1Backend.WriteAsync(pipe.Writer, Http1Backend.Bytes("HTTP/1.1 404 Not Found\r\nX-A: b\r\nContent-Length: 0\r\n\r\n"), pieceSize: 1);

        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(pipe.Reader, false, CancellationToken.None).AsTask().WithTimeout();

        Assert.NotNull(head);
        Assert.Equal(404, head.StatusCode);
        Assert.Equal("b", Header(head, "X-A"));
        await write.WithTimeout();
    }

    [Fact]
    public async Task A_status_line_without_a_reason_phrase_is_accepted()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n");

        Assert.Equal(200, head.StatusCode);
    }

    [Fact]
    public async Task Two_responses_on_one_connection_are_read_in_turn()
    {
        PipeReader reader = await Http1Backend.WithAsync(
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", complete: true);

        BackendResponseHead? first = await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None);
        BackendResponseHead? second = await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None);
        BackendResponseHead? none = await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None);

        Assert.Equal(200, first?.StatusCode);
        Assert.Equal(202, second?.StatusCode);
        Assert.Null(none);
    }

    [Theory]
    [InlineData("garbage\r\n\r\n")]
    [InlineData("HTTP/1.1 abc OK\r\n\r\n")]
    [InlineData("HTTP/1.1 2x0 OK\r\n\r\n")]
    [InlineData("HTTP/2 200 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 20\r\n\r\n")]
    [InlineData("ICY 200 OK\r\n\r\n")]
    [InlineData("\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\n: no name\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 1.5\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 0\r\n\r\n")] // a bare LF: a second line to some parsers, none to others
    [InlineData("HTTP/1.1 200 OK\r\nX-A: 1\rContent-Length: 0\r\n\r\n")] // a bare CR
    [InlineData("HTTP/1.1 200 OK\r\nX-A: \u0000\r\n\r\n")] // a control character in a value
    [InlineData("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n")] // a field name that is not a token
    [InlineData("HTTP/1.1 200 OK\r\n folded: x\r\n\r\n")] // obs-fold
    [InlineData("HTTP/1.1200 OK\r\n\r\n")] // no space after the version
    [InlineData("HTTP/1.1 000 OK\r\nContent-Length: 0\r\n\r\n")] // below 100: found by the fuzzer, it used to cross and drop the uplink
    [InlineData("HTTP/1.1 020 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 099 OK\r\n\r\n")]
    [InlineData("HTTP/1.. 200 OK\r\n\r\n")] // a minor version that is not a digit
    public async Task A_malformed_head_is_InvalidDataException(string raw)
    {
        PipeReader reader = await Http1Backend.WithAsync(raw, complete: true);

        await Assert.ThrowsAsync<InvalidDataException>(async () => await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None));
    }

    [Fact]
    public async Task A_head_larger_than_64_KiB_is_InvalidDataException()
    {
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0));
        await Http1Backend.WriteAsync(pipe.Writer, Http1Backend.Bytes("HTTP/1.1 200 OK\r\nX-Big: " + new string('x', 70_000)));

        await Assert.ThrowsAsync<InvalidDataException>(async () => await ResponseHeadReader.ReadAsync(pipe.Reader, false, CancellationToken.None).AsTask().WithTimeout());
    }

    [Fact]
    public async Task More_fields_than_the_head_codec_carries_is_InvalidDataException()
    {
        // 1025 fields in 8 KiB: within the size limit, but the server would refuse the encoded head as a protocol
        // error and drop the whole uplink, so the client must refuse it here, as a 502 for this exchange only.
        string fields = string.Concat(Enumerable.Repeat("X-H: 1\r\n", HeadCodec.MaxHeaderCount + 1));
        PipeReader reader = await Http1Backend.WithAsync($"HTTP/1.1 200 OK\r\n{fields}\r\n", complete: true);

        await Assert.ThrowsAsync<InvalidDataException>(async () => await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None));
    }

    [Fact]
    public async Task As_many_fields_as_the_head_codec_carries_are_read()
    {
        string fields = string.Concat(Enumerable.Repeat("X-H: 1\r\n", HeadCodec.MaxHeaderCount - 1));

        BackendResponseHead head = await ReadAsync($"HTTP/1.1 200 OK\r\n{fields}Connection: keep-alive\r\nContent-Length: 0\r\n\r\n");

        Assert.Equal(HeadCodec.MaxHeaderCount, head.Headers.Count); // Connection dropped, Content-Length kept
    }

    [Fact]
    public async Task A_connection_closed_before_any_byte_is_null()
    {
        PipeReader reader = await Http1Backend.WithAsync("", complete: true);

        Assert.Null(await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None));
    }

    [Theory]
    [InlineData("H")]
    [InlineData("HTTP/1.1 100 Continue\r\n\r\n")] // an interim answer, then the close: not "closed before a byte" (found by the fuzzer)
    [InlineData("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r")]
    public async Task A_connection_closed_inside_the_head_is_IOException(string raw)
    {
        PipeReader reader = await Http1Backend.WithAsync(raw, complete: true);

        await Assert.ThrowsAsync<IOException>(async () => await ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None));
    }

    [Fact]
    public async Task A_read_started_ahead_becomes_the_first_read_of_the_head()
    {
        var pipe = new Pipe();
#pragma warning disable CA2012 // the pending read is handed over whole (as a nullable), and consumed once, by the reader
        Task<BackendResponseHead?> reading = ResponseHeadReader.ReadAsync(pipe.Reader, pipe.Reader.ReadAsync(), false, false, CancellationToken.None).AsTask();
#pragma warning restore CA2012
        Assert.False(reading.IsCompleted);

        await pipe.Writer.WriteAsync("HTTP/1.1 204 No Content\r\n\r\n"u8.ToArray());

        BackendResponseHead? head = await reading.WithTimeout();
        Assert.Equal(204, head!.StatusCode);
    }

    [Fact]
    public async Task Waiting_on_a_read_started_ahead_can_be_cancelled()
    {
        var pipe = new Pipe();
        using var cancel = new CancellationTokenSource();
#pragma warning disable CA2012 // the pending read is handed over whole (as a nullable), and consumed once, by the reader
        Task<BackendResponseHead?> reading = ResponseHeadReader.ReadAsync(pipe.Reader, pipe.Reader.ReadAsync(), false, false, cancel.Token).AsTask();
#pragma warning restore CA2012

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reading.WithTimeout());
    }

    [Fact]
    public async Task Waiting_for_a_head_can_be_cancelled()
    {
        var pipe = new Pipe();
        using var cancel = new CancellationTokenSource();
        Task<BackendResponseHead?> reading = ResponseHeadReader.ReadAsync(pipe.Reader, false, cancel.Token).AsTask();

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reading.WithTimeout());
    }

    [Theory]
    [InlineData("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n")]
    [InlineData("Transfer-Encoding: chunked\r\nContent-Length: 48\r\n")]
    public async Task Transfer_Encoding_wins_over_Content_Length_and_the_connection_is_closed_after(string fields)
    {
        BackendResponseHead head = await ReadAsync($"HTTP/1.1 200 OK\r\n{fields}\r\n");

        Assert.Equal(BodyFraming.Chunked, head.Framing);
        Assert.Equal(CloseCause.LengthAndTransferEncoding, head.CloseCause);
        Assert.False(head.KeepAlive);
        Assert.Null(Header(head, "Content-Length"));
    }

    [Theory]
    [InlineData("gzip")]
    [InlineData("chunked, gzip")]
    [InlineData("xchunked")]
    public async Task A_final_coding_other_than_chunked_runs_until_close(string codings)
    {
        BackendResponseHead head = await ReadAsync($"HTTP/1.1 200 OK\r\nTransfer-Encoding: {codings}\r\n\r\n");

        Assert.Equal(BodyFraming.UntilClose, head.Framing);
        Assert.Equal(CloseCause.ReadUntilClose, head.CloseCause);
    }

    [Fact]
    public async Task Chunked_as_the_final_of_several_codings_is_chunked_framing()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nContent-Encoding: br\r\n\r\n");

        Assert.Equal(BodyFraming.Chunked, head.Framing);
        Assert.True(head.KeepAlive);
    }

    [Fact]
    public async Task Two_different_lengths_are_a_framing_error()
    {
        PipeReader reader = await Http1Backend.WithAsync("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!");

        await Assert.ThrowsAsync<InvalidDataException>(() => ResponseHeadReader.ReadAsync(reader, false, CancellationToken.None).AsTask().WithTimeout());
    }

    [Fact]
    public async Task A_repeated_equal_length_is_kept_once()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n");

        Assert.Equal(BodyFraming.ContentLength, head.Framing);
        Assert.Equal("5", Header(head, "Content-Length"));
    }

    [Fact]
    public async Task A_204_loses_its_Content_Length_and_has_no_body()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 204 No Content\r\nContent-Length: 42\r\n\r\n");

        Assert.Equal(BodyFraming.None, head.Framing);
        Assert.Null(Header(head, "Content-Length"));
        Assert.True(head.KeepAlive);
    }

    [Fact]
    public async Task A_304_keeps_its_Content_Length_as_metadata_and_has_no_body()
    {
        BackendResponseHead head = await ReadAsync("HTTP/1.1 304 Not Modified\r\nContent-Length: 42\r\n\r\n");

        Assert.Equal(BodyFraming.None, head.Framing);
        Assert.Equal("42", Header(head, "Content-Length"));
    }

    [Fact]
    public async Task A_101_to_an_upgrade_request_is_the_final_answer_keeping_Upgrade_and_leaving_the_new_protocols_bytes_in_the_pipe()
    {
        PipeReader reader = await Http1Backend.WithAsync(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: abc=\r\nContent-Length: 3\r\n\r\n\x81\x01x", complete: true);

        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(reader, null, isHeadRequest: false, upgradeRequested: true, CancellationToken.None);

        Assert.NotNull(head);
        Assert.Equal(101, head.StatusCode);
        Assert.Equal(BodyFraming.None, head.Framing);
        Assert.Equal(CloseCause.Upgraded, head.CloseCause);
        Assert.Equal("websocket", Header(head, "Upgrade"));
        Assert.Equal("abc=", Header(head, "Sec-WebSocket-Accept"));
        Assert.Null(Header(head, "Connection"));
        Assert.Null(Header(head, "Content-Length"));
        Assert.Equal("\x81\x01x", Http1Backend.Rest(reader));
    }

    [Fact]
    public async Task A_101_to_a_request_that_asked_for_no_upgrade_is_a_framing_error()
    {
        PipeReader reader = await Http1Backend.WithAsync("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");

        await Assert.ThrowsAsync<InvalidDataException>(async () =>
            await ResponseHeadReader.ReadAsync(reader, null, isHeadRequest: false, upgradeRequested: false, CancellationToken.None));
    }

    [Fact]
    public async Task An_upgrade_request_the_backend_declines_gets_a_plain_answer_without_Upgrade()
    {
        PipeReader reader = await Http1Backend.WithAsync("HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n");

        BackendResponseHead? head = await ResponseHeadReader.ReadAsync(reader, null, isHeadRequest: false, upgradeRequested: true, CancellationToken.None);

        Assert.Equal(426, head!.StatusCode);
        Assert.Null(Header(head, "Upgrade"));
        Assert.Null(head.CloseCause);
    }
}
