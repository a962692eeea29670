using System.IO.Pipelines;
using System.Text;
using Tunnel2.TunnelServer.Uplinks.Handshake;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Handshake;

/// <summary>The head reader on a pipe, without a socket: what each way of failing to send a head earns.</summary>
public sealed class HandshakeReaderTests
{
    private static readonly HandshakeReader Reader = new(TestTimeouts.Default);

    [Fact]
    public async Task A_whole_head_is_read()
    {
        HeadRead read = await ReadAsync("GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\nUpgrade: tunnel2\r\n\r\n");

        Assert.Equal("GET /tunnel2/connect HTTP/1.1", read.Head!.StartLine);
        Assert.Equal("tunnel2", read.Head["Upgrade"]);
        Assert.Equal((null, null), (read.Refusal, read.Abandoned));
    }

    [Fact]
    public async Task A_head_over_32_KiB_is_refused_with_431()
    {
        HeadRead read = await ReadAsync($"GET /tunnel2/connect HTTP/1.1\r\nX-Padding: {new string('a', HandshakeReader.MaxHeadBytes)}\r\n\r\n");

        Assert.Null(read.Head);
        Assert.Equal((431, "head-too-large"), (read.Refusal!.Status, read.Refusal.Reason));
        Assert.Equal("The upgrade request must fit in 32768 bytes.", read.Refusal.Detail);
    }

    [Fact]
    public async Task A_malformed_head_is_refused_with_400_saying_what_is_wrong()
    {
        HeadRead read = await ReadAsync("GET /tunnel2/connect HTTP/1.1\r\nHost: t\u0001\r\n\r\n");

        Assert.Equal((400, "bad-request"), (read.Refusal!.Status, read.Refusal.Reason));
        Assert.Equal("The head contains a control character or a bare LF.", read.Refusal.Detail);
    }

    [Fact]
    public async Task A_head_that_does_not_arrive_within_the_timeout_is_refused_with_408()
    {
        var pipe = new Pipe();
        var reader = new HandshakeReader(TimeSpan.FromMilliseconds(50));
        await pipe.Writer.WriteAsync(Encoding.ASCII.GetBytes("GET /tunnel2/connect HTTP/1.1\r\n")); // and nothing more
        using CancellationTokenSource deadline = reader.StartDeadline(CancellationToken.None);

        HeadRead read = await reader.ReadAsync(pipe.Reader, deadline.Token, CancellationToken.None).WithTimeout();

        Assert.Equal((408, "handshake-timeout"), (read.Refusal!.Status, read.Refusal.Reason));
        Assert.Equal("The upgrade request did not arrive within 0.05 s.", read.Refusal.Detail);
    }

    [Fact]
    public async Task A_connection_closed_without_a_word_is_a_probe_neither_refused_nor_abandoned()
    {
        HeadRead read = await ReadAsync(string.Empty);

        Assert.Equal(default, read);
    }

    [Fact]
    public async Task A_server_stopping_during_the_head_abandons_it_without_a_refusal()
    {
        var pipe = new Pipe();
        using var stopping = new CancellationTokenSource();
        using CancellationTokenSource deadline = Reader.StartDeadline(stopping.Token);
        Task<HeadRead> reading = Reader.ReadAsync(pipe.Reader, deadline.Token, stopping.Token);

        await stopping.CancelAsync();
        HeadRead read = await reading.WithTimeout();

        Assert.Equal((null, null), (read.Head, read.Refusal));
        Assert.NotNull(read.Abandoned);
    }

    [Fact]
    public void Only_the_failures_of_a_client_or_a_stop_are_handshake_failures()
    {
        Assert.True(HandshakeReader.IsHandshakeFailure(new IOException("reset")));
        Assert.True(HandshakeReader.IsHandshakeFailure(new OperationCanceledException()));
        Assert.False(HandshakeReader.IsHandshakeFailure(new InvalidOperationException("a bug")));
        Assert.Equal("reset", Reader.Failed(new IOException("reset"), CancellationToken.None).Abandoned);
    }

    private static async Task<HeadRead> ReadAsync(string bytes)
    {
        var pipe = new Pipe();
        await pipe.Writer.WriteAsync(Encoding.ASCII.GetBytes(bytes));
        await pipe.Writer.CompleteAsync();
        using CancellationTokenSource deadline = Reader.StartDeadline(CancellationToken.None);
        return await Reader.ReadAsync(pipe.Reader, deadline.Token, CancellationToken.None).WithTimeout();
    }
}
