using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Http1;

namespace Tunnel2.UnitTests.Http1;

/// <summary>The one HTTP/1 head parser: both ends of the uplink handshake and the client reading its backend's answers use it.</summary>
public sealed class Http1HeadTests
{
    [Fact]
    public async Task A_head_is_read_up_to_its_blank_line_and_what_follows_stays_in_the_pipe()
    {
        PipeReader reader = Reader("GET /tunnel2/connect HTTP/1.1\r\nHost: x\r\nUpgrade:  tunnel2 \r\nX-A: 1\r\nx-a: 2\r\n\r\nFRAMES");

        Http1Head head = (await Http1Head.ReadAsync(reader, 1024, CancellationToken.None))!;

        Assert.Equal("GET /tunnel2/connect HTTP/1.1", head.StartLine);
        Assert.Equal("tunnel2", head["upgrade"]);
        Assert.Equal("1, 2", head["X-A"]);
        Assert.Null(head["Missing"]);
        Assert.Equal(["Host", "Upgrade", "X-A", "x-a"], head.Fields.Select(field => field.Name));
        ReadResult rest = await reader.ReadAsync();
        Assert.Equal("FRAMES", Encoding.ASCII.GetString(rest.Buffer));
    }

    [Fact]
    public async Task Obs_text_is_allowed_in_the_start_line_and_in_values_as_RFC_9112_allows()
    {
        PipeReader reader = PipeReader.Create(new MemoryStream(Encoding.Latin1.GetBytes("HTTP/1.1 200 Trés bien\r\nX-Name: José\r\n\r\n")));

        Http1Head head = (await Http1Head.ReadAsync(reader, 1024, CancellationToken.None))!;

        Assert.Equal("HTTP/1.1 200 Trés bien", head.StartLine);
        Assert.Equal("José", head["x-name"]);
    }

    [Fact]
    public async Task A_head_that_arrives_in_pieces_is_assembled()
    {
        var pipe = new Pipe();
        ValueTask<Http1Head?> reading = Http1Head.ReadAsync(pipe.Reader, 1024, CancellationToken.None);
        foreach (string piece in new[] { "HTTP/1.1 101 Swi", "tching\r\nUpgrade: tun", "nel2\r", "\n\r\n" })
        {
            Assert.False(reading.IsCompleted);
            await pipe.Writer.WriteAsync(Encoding.ASCII.GetBytes(piece));
        }

        Http1Head head = (await reading.AsTask().WaitAsync(TimeSpan.FromSeconds(10)))!;
        Assert.Equal("HTTP/1.1 101 Switching", head.StartLine);
        Assert.Equal("tunnel2", head["Upgrade"]);
    }

    [Fact]
    public async Task A_connection_closed_before_its_first_byte_has_no_head_and_one_closed_inside_a_head_is_an_IO_error()
    {
        Assert.Null(await Http1Head.ReadAsync(Reader(string.Empty), 1024, CancellationToken.None));
        await Assert.ThrowsAsync<IOException>(async () => await Http1Head.ReadAsync(Reader("GET / HTTP/1.1\r\nHost:"), 1024, CancellationToken.None));
    }

    [Theory]
    [InlineData(100)] // no blank line within the limit
    [InlineData(60)] // a complete head, but longer than the limit
    public async Task A_head_over_the_limit_is_refused(int limit)
    {
        string head = "GET / HTTP/1.1\r\n" + string.Concat(Enumerable.Repeat("X-Filler: 0123456789\r\n", 10)) + (limit == 60 ? "\r\n" : string.Empty);

        var error = await Assert.ThrowsAsync<Http1HeadTooLargeException>(async () => await Http1Head.ReadAsync(Reader(head), limit, CancellationToken.None));
        Assert.Equal(limit, error.Limit);
    }

    [Theory]
    [InlineData("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n")] // space in a field name
    [InlineData("GET / HTTP/1.1\r\nNoColon\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\n folded: x\r\n\r\n")] // obs-fold
    [InlineData("GET / HTTP/1.1\r\nA: x\ny: z\r\n\r\n")] // bare LF
    [InlineData("GET / HTTP/1.1\r\nA: x\0\r\n\r\n")] // NUL
    [InlineData("GET / HTTP/1.1\r\nA: x\ry\r\n\r\n")] // bare CR
    public async Task A_malformed_head_is_refused(string head)
    {
        await Assert.ThrowsAsync<InvalidDataException>(async () => await Http1Head.ReadAsync(Reader(head), 1024, CancellationToken.None));
    }

    [Fact]
    public async Task Bytes_no_HTTP_head_contains_are_refused_before_any_blank_line_arrives()
    {
        var pipe = new Pipe();
        byte[] garbage = new byte[512];
        new Random(42).NextBytes(garbage);
        await pipe.Writer.WriteAsync(garbage); // no end of the head, and the writer stays open

        await Assert.ThrowsAsync<InvalidDataException>(async () => await Http1Head.ReadAsync(pipe.Reader, 32 * 1024, CancellationToken.None).AsTask().WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task A_connection_closed_inside_a_head_that_spans_pipe_segments_is_an_IO_error_whatever_its_length()
    {
        // A head, then 4 KiB of an unfinished one: the second spans two 4 KiB pipe segments and ends at the offset in the
        // second where it starts in the first. Measured after AdvanceTo (which resets those segments) it looked empty,
        // and the cut was taken for a clean end between heads.
        const string first = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        string unfinished = "GET /" + new string('a', 4096 - 5);
        var pipe = new Pipe(new PipeOptions(minimumSegmentSize: 4096));
        await pipe.Writer.WriteAsync(Encoding.Latin1.GetBytes(first + unfinished));
        await pipe.Writer.CompleteAsync();

        Assert.NotNull(await Http1Head.ReadAsync(pipe.Reader, 32 * 1024, CancellationToken.None));
        await Assert.ThrowsAsync<IOException>(async () => await Http1Head.ReadAsync(pipe.Reader, 32 * 1024, CancellationToken.None));
    }

    private static PipeReader Reader(string text) => PipeReader.Create(new MemoryStream(Encoding.Latin1.GetBytes(text)));
}
