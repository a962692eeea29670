using System.IO.Pipelines;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// Kestrel's end of a loop connection's output pipe, counting the bytes it writes: once a flush has returned, everything
/// counted is in the pipe, so the count is the mark a send progress waits for (<see cref="LoopConnection.Flushed"/>).
/// </summary>
internal sealed class CountingPipeWriter(PipeWriter inner) : PipeWriter
{
    private long _written;

    /// <summary>Bytes written so far (read from any thread; Kestrel writes from one at a time).</summary>
    public long Written => Volatile.Read(ref _written);

    public override bool CanGetUnflushedBytes => inner.CanGetUnflushedBytes;

    public override long UnflushedBytes => inner.UnflushedBytes;

    public override void Advance(int bytes)
    {
        inner.Advance(bytes);
        Volatile.Write(ref _written, _written + bytes);
    }

    public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

    public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => inner.FlushAsync(cancellationToken);

    public override ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
    {
        Volatile.Write(ref _written, _written + source.Length);
        return inner.WriteAsync(source, cancellationToken);
    }

    public override void CancelPendingFlush() => inner.CancelPendingFlush();

    public override void Complete(Exception? exception = null) => inner.Complete(exception);

    public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);
}
