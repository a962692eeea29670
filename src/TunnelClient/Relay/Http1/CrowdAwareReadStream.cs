namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>
/// The stream under a backend connection's pipe reader, which asks for a zero-byte read before each read into a buffer
/// (<c>StreamPipeReaderOptions.UseZeroByteReads</c>). While the backend is crowded (<c>Backend.IsCrowded</c>), that
/// read goes to the socket, so a read waiting for a response head holds no buffer until the backend has bytes, as
/// Kestrel's connections wait; under ~9,700 slow readers about 5,000 heads waited with 16 KiB each
/// (docs/benchmarks/2026-11-24-storm.md). Otherwise it is answered at once: taken always, the wait cost one more
/// receive call per exchange, +0.57 syscalls and ~4 µs of CPU per request at 5,000 req/s.
/// </summary>
internal sealed class CrowdAwareReadStream(Stream inner, Func<bool> isCrowded) : Stream
{
    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
        buffer.IsEmpty && !isCrowded() ? ValueTask.FromResult(0) : inner.ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => inner.Read(buffer, offset, count);

    public override int Read(Span<byte> buffer) => inner.Read(buffer);

    public override void Flush()
    {
    }

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
