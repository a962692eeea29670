using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>
/// An HTTP body copied into a pipe writer: the reader writes the peer's Data frames to the destination itself while the
/// copy loop has nothing buffered (no inbound pipe copy), and every guarantee of the copy loop still holds.
/// </summary>
public sealed class InboundBodyTests(ITestOutputHelper output)
{
    private const int Window = 64 * 1024;

    private static readonly UplinkSettings FixedWindow = new() { InitialStreamWindow = Window, MaxStreamWindow = Window };

    [Fact]
    public async Task A_body_the_destination_takes_at_once_passes_the_pipe_for_at_most_one_window()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/up", []), endStream: false);
        byte[] body = Pattern(4 * 1024 * 1024);
        using var received = new MemoryStream();

        Task copy = client.CopyInputToAsync(PipeWriter.Create(received), chunked: false, CancellationToken.None);
        await server.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None);
        await copy.WithTimeout();

        Assert.Equal(body, received.ToArray());
        Assert.InRange(client.PipedBytes, 0, Window);
    }

    [Fact]
    public async Task A_chunked_body_is_framed_whole_and_the_tap_sees_every_byte_on_both_paths()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/up", []), endStream: false);
        byte[] body = Pattern(1024 * 1024);
        using var received = new MemoryStream();
        var tap = new CountingTap();

        Task copy = client.CopyInputToAsync(PipeWriter.Create(received), chunked: true, tap, CancellationToken.None);
        await server.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None);
        await copy.WithTimeout();

        Assert.Equal(body, Unchunk(received.ToArray()));
        Assert.Equal(body.Length, tap.Bytes);
        Assert.True(client.PipedBytes < body.Length, "every frame went through the pipe");
    }

    [Fact]
    public async Task A_destination_that_does_not_drain_holds_the_peer_at_the_window_and_then_gets_every_byte_in_order()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/up", []), endStream: false);
        byte[] body = Pattern(2 * 1024 * 1024);
        var destination = new Pipe(new PipeOptions(pauseWriterThreshold: 16 * 1024, resumeWriterThreshold: 8 * 1024, useSynchronizationContext: false));

        Task copy = client.CopyInputToAsync(destination.Writer, chunked: false, CancellationToken.None);
        Task send = server.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None).AsTask();
        await Eventually.WaitUntilAsync(() => client.ReceivedBytes > 0 && !server.HasSendCredit, "the sender runs out of credit");

        // Credit came back only for what the destination took before it paused (its threshold plus one frame at most).
        Assert.InRange(client.ReceivedBytes, 1, Window + 16 * 1024 + Window);
        Assert.False(send.IsCompleted);

        Task<byte[]> drained = ReadAllAsync(destination.Reader);
        await Task.WhenAll(send, copy).WithTimeout();
        await destination.Writer.CompleteAsync();
        Assert.Equal(body, await drained.WithTimeout());
    }

    /// <summary>
    /// With the default windows and a destination like Kestrel's (it pauses at 64 KiB and a reader drains it), the whole
    /// body arrives in order; how much of it still passed the pipe is written out (docs/benchmarks/2026-11-29-http-body-sink.md).
    /// </summary>
    [Fact]
    public async Task A_body_into_a_destination_that_drains_as_it_goes_arrives_whole_and_in_order()
    {
        await using var pair = UplinkPair.Start();
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/up", []), endStream: false);
        byte[] body = Pattern(64 * 1024 * 1024);
        var destination = new Pipe(new PipeOptions(pauseWriterThreshold: 64 * 1024, resumeWriterThreshold: 32 * 1024, useSynchronizationContext: false));

        Task<byte[]> drained = ReadAllAsync(destination.Reader);
        Task copy = client.CopyInputToAsync(destination.Writer, chunked: false, CancellationToken.None);
        await server.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None);
        await copy.WithTimeout();
        await destination.Writer.CompleteAsync();

        Assert.Equal(body, await drained.WithTimeout());
        output.WriteLine($"piped {client.PipedBytes} of {body.Length} bytes ({100.0 * client.PipedBytes / body.Length:F1} %)");
    }

    [Fact]
    public async Task A_reset_while_the_reader_s_flush_is_under_way_ends_the_copy_only_once_that_flush_has_completed()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/up", []), endStream: false);
        var destination = new Pipe(new PipeOptions(pauseWriterThreshold: 16 * 1024, resumeWriterThreshold: 8 * 1024, useSynchronizationContext: false));

        Task copy = client.CopyInputToAsync(destination.Writer, chunked: false, CancellationToken.None);
        _ = server.SendAsync(new ReadOnlySequence<byte>(Pattern(1024 * 1024)), endStream: true, CancellationToken.None).AsTask();
        await Eventually.WaitUntilAsync(() => client.ReceivedBytes > 0 && !server.HasSendCredit, "the sender runs out of credit");
        server.Reset(Tunnel2.Protocol.Frames.ProtocolErrorCode.Cancelled);
        await Eventually.WaitUntilAsync(() => client.IsAborted, "the reset reaches the client");
        await pair.BarrierAsync();

        // The destination's flush is still under way (nobody reads it): the copy has not let go of it.
        Assert.False(copy.IsCompleted);
        Task<byte[]> drained = ReadAllAsync(destination.Reader);
        await Assert.ThrowsAsync<StreamResetException>(() => copy.WithTimeout());
        await destination.Writer.CompleteAsync();
        await drained.WithTimeout();
    }

    [Fact]
    public async Task A_write_the_destination_refuses_on_the_reader_fails_the_copy_with_that_exception()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/up", []), endStream: false);
        var destination = new RefusingWriter(PipeWriter.Create(Stream.Null), limit: 100_000);

        Task copy = client.CopyInputToAsync(destination, chunked: false, CancellationToken.None);
        _ = server.SendAsync(new ReadOnlySequence<byte>(Pattern(1024 * 1024)), endStream: true, CancellationToken.None).AsTask();

        var refused = await Assert.ThrowsAsync<InvalidOperationException>(() => copy.WithTimeout());
        Assert.Equal(RefusingWriter.Message, refused.Message);
        int written = destination.Written;
        server.Reset(Tunnel2.Protocol.Frames.ProtocolErrorCode.Cancelled);
        await pair.BarrierAsync();
        Assert.Equal(written, destination.Written);
    }

    [Fact]
    public async Task A_destination_that_reports_its_sends_gets_credit_back_only_for_bytes_it_has_sent()
    {
        await using var pair = UplinkPair.Start(FixedWindow);
        (UplinkStream server, UplinkStream client) = await pair.OpenAsync(new RequestHead("POST", "/up", []), endStream: false);
        byte[] body = Pattern(1024 * 1024);
        using var received = new MemoryStream();
        var destination = new SentOnDemandWriter(PipeWriter.Create(received));

        // Every flush into this destination completes at once; only its sends let credit go back.
        Task copy = client.CopyInputToAsync(destination, chunked: false, tap: null, destination, CancellationToken.None);
        Task send = server.SendAsync(new ReadOnlySequence<byte>(body), endStream: true, CancellationToken.None).AsTask();
        await Eventually.WaitUntilAsync(() => client.ReceivedBytes > 0 && !server.HasSendCredit, "the sender runs out of credit");
        await pair.BarrierAsync();

        Assert.InRange(client.ReceivedBytes, 1, Window);
        Assert.False(send.IsCompleted);

        await Eventually.WaitUntilAsync(() => destination.SendAll() && copy.IsCompleted, "the body gets through as its bytes are sent");
        await Task.WhenAll(send, copy).WithTimeout();
        Assert.Equal(body, received.ToArray());
        Assert.False(destination.HasListener, "the copy's end dropped its wait");
    }

    private static byte[] Pattern(int length)
    {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(i * 31 + (i >> 12));
        }

        return bytes;
    }

    private static async Task<byte[]> ReadAllAsync(PipeReader reader)
    {
        using var all = new MemoryStream();
        await reader.CopyToAsync(all);
        return all.ToArray();
    }

    /// <summary>Decodes HTTP/1.1 chunked framing (sizes in hex, no extensions, no trailers).</summary>
    private static byte[] Unchunk(byte[] framed)
    {
        using var body = new MemoryStream();
        int at = 0;
        while (true)
        {
            int lineEnd = Array.IndexOf(framed, (byte)'\r', at);
            int size = Convert.ToInt32(Encoding.ASCII.GetString(framed, at, lineEnd - at), 16);
            at = lineEnd + 2;
            if (size == 0)
            {
                Assert.Equal(at + 2, framed.Length);
                return body.ToArray();
            }

            body.Write(framed, at, size);
            at += size + 2;
        }
    }

    private sealed class CountingTap : IBodyTap
    {
        public long Bytes;

        public void Observe(ReadOnlySpan<byte> bytes) => Bytes += bytes.Length;
    }

    /// <summary>A destination whose flushes complete at once and whose bytes count as sent only when the test says so.</summary>
    private sealed class SentOnDemandWriter(PipeWriter inner) : PipeWriter, ISendProgress
    {
        private readonly Lock _lock = new();
        private long _written;
        private long _sent;
        private long _mark;
        private ISendProgressListener? _listener;

        public long Flushed => Interlocked.Read(ref _written);

        public bool HasListener
        {
            get
            {
                lock (_lock)
                {
                    return _listener is not null;
                }
            }
        }

        public bool NotifyWhenSent(long mark, ISendProgressListener listener)
        {
            lock (_lock)
            {
                if (_sent >= mark)
                {
                    return false;
                }

                (_mark, _listener) = (mark, listener);
                return true;
            }
        }

        public void Forget(ISendProgressListener listener)
        {
            lock (_lock)
            {
                if (ReferenceEquals(_listener, listener))
                {
                    _listener = null;
                }
            }
        }

        /// <summary>Everything written so far counts as sent; the waiting listener, if due, is told.</summary>
        /// <returns>Always true (for use in a wait's condition).</returns>
        public bool SendAll()
        {
            ISendProgressListener? listener;
            long sent;
            lock (_lock)
            {
                _sent = Flushed;
                sent = _sent;
                listener = _listener;
                if (listener is null || sent < _mark)
                {
                    return true;
                }

                _listener = null;
            }

            listener.OnSent(this, sent);
            return true;
        }

        public override void Advance(int bytes)
        {
            inner.Advance(bytes);
            Interlocked.Add(ref _written, bytes);
        }

        public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => inner.FlushAsync(cancellationToken);

        public override void CancelPendingFlush() => inner.CancelPendingFlush();

        public override void Complete(Exception? exception = null) => inner.Complete(exception);
    }

    /// <summary>A writer that throws once more than its limit was written, as Kestrel does past a Content-Length.</summary>
    private sealed class RefusingWriter(PipeWriter inner, int limit) : PipeWriter
    {
        public const string Message = "Too many bytes written.";

        public int Written;

        public override void Advance(int bytes)
        {
            if (Written + bytes > limit)
            {
                throw new InvalidOperationException(Message);
            }

            Written += bytes;
            inner.Advance(bytes);
        }

        public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

        public override void CancelPendingFlush() => inner.CancelPendingFlush();

        public override void Complete(Exception? exception = null) => inner.Complete(exception);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => inner.FlushAsync(cancellationToken);
    }
}
