using System.Collections.Concurrent;
using System.IO.Pipelines;
using System.Threading.Tasks.Sources;
using Tunnel2.Loops;

namespace Tunnel2.UnitTests.Uplinks.OnLoop;

/// <summary>
/// A body's destination over a pipe that holds little: every flush that does not complete at once is handed out as
/// one the test sees awaited. For each such flush started on the loop (the uplink's reader writing the body itself),
/// it notes on which thread its waiter (the body's copy loop) registered; the test drains the pipe only once somebody
/// waits, so every such flush is still pending when it is awaited.
/// </summary>
internal sealed class AwaitSpyWriter(Pipe pipe) : PipeWriter, IValueTaskSource<FlushResult>
{
    private readonly PipeWriter _inner = pipe.Writer;
    private ValueTask<FlushResult> _pending;
    private bool _pendingFromLoop;
    private short _version;

    /// <summary>For each pending flush the loop started, whether its waiter registered on the loop's thread.</summary>
    public ConcurrentQueue<bool> AwaitedOnLoop { get; } = new();

    /// <summary>Released each time a waiter registers: the test drains the pipe then.</summary>
    public SemaphoreSlim Awaited { get; } = new(0);

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        ValueTask<FlushResult> flush = _inner.FlushAsync(cancellationToken);
        if (flush.IsCompleted)
        {
            return flush;
        }

        _pending = flush;
        _pendingFromLoop = EventLoop.IsLoopThread;
        return new ValueTask<FlushResult>(this, ++_version);
    }

    public FlushResult GetResult(short token) => _pending.GetAwaiter().GetResult();

    public ValueTaskSourceStatus GetStatus(short token) => !_pending.IsCompleted ? ValueTaskSourceStatus.Pending
        : _pending.IsCompletedSuccessfully ? ValueTaskSourceStatus.Succeeded
        : _pending.IsCanceled ? ValueTaskSourceStatus.Canceled : ValueTaskSourceStatus.Faulted;

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        if (_pendingFromLoop)
        {
            AwaitedOnLoop.Enqueue(EventLoop.IsLoopThread);
        }

        _pending.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(() => continuation(state));
        Awaited.Release();
    }

    public override void Advance(int bytes) => _inner.Advance(bytes);

    public override Memory<byte> GetMemory(int sizeHint = 0) => _inner.GetMemory(sizeHint);

    public override Span<byte> GetSpan(int sizeHint = 0) => _inner.GetSpan(sizeHint);

    public override void CancelPendingFlush() => _inner.CancelPendingFlush();

    public override void Complete(Exception? exception = null) => _inner.Complete(exception);
}
