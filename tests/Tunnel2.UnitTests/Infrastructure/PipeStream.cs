using System.IO.Pipelines;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>
/// A duplex <see cref="Stream"/> over two in-memory pipes, standing in for a socket's stream so that
/// <c>DuplexPipe.Over(stream)</c> (the adapter the hosts use) can be tested without a network. Records what is written.
/// </summary>
internal sealed class PipeStream(PipeReader input, PipeWriter output) : Stream
{
    private readonly Stream _input = input.AsStream();
    private readonly Stream _output = output.AsStream();
    private readonly MemoryStream _written = new();

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public byte[] Written
    {
        get
        {
            lock (_written)
            {
                return _written.ToArray();
            }
        }
    }

    /// <summary>Both ends of a connection: what one writes, the other reads.</summary>
    public static (PipeStream A, PipeStream B) CreatePair()
    {
        var aToB = new Pipe();
        var bToA = new Pipe();
        return (new PipeStream(bToA.Reader, aToB.Writer), new PipeStream(aToB.Reader, bToA.Writer));
    }

    public override void Flush() => _output.Flush();

    public override Task FlushAsync(CancellationToken cancellationToken) => _output.FlushAsync(cancellationToken);

    public override int Read(byte[] buffer, int offset, int count) => _input.Read(buffer, offset, count);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
        _input.ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        _input.ReadAsync(buffer, offset, count, cancellationToken);

    public override void Write(byte[] buffer, int offset, int count) => WriteAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested(); // as a socket does: a cancelled write sends nothing
        lock (_written)
        {
            _written.Write(buffer.Span);
        }

        await _output.WriteAsync(buffer, cancellationToken);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _input.Dispose();
            _output.Dispose();
        }

        base.Dispose(disposing);
    }
}
