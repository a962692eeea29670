namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>
/// A connection whose peer stopped reading and whose buffers are full: a write never completes. A write given a
/// cancellable token ends when it is cancelled (as a socket or Kestrel write does); one given none hangs for good, and
/// is counted, since nothing could ever end it short of disposing the connection.
/// </summary>
internal sealed class FrozenStream : Stream
{
    private readonly TaskCompletionSource _disposed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _writes;
    private int _uncancellableWrites;

    public int Writes => Volatile.Read(ref _writes);

    public int UncancellableWrites => Volatile.Read(ref _uncancellableWrites);

    public override bool CanRead => true;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _writes);
        if (!cancellationToken.CanBeCanceled)
        {
            Interlocked.Increment(ref _uncancellableWrites);
        }

        await _disposed.Task.WaitAsync(cancellationToken);
        throw new ObjectDisposedException(nameof(FrozenStream));
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        await _disposed.Task.WaitAsync(cancellationToken);
        return 0;
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        _disposed.TrySetResult();
        base.Dispose(disposing);
    }
}
