namespace Tunnel2.TunnelClient.Relay.Admission;

/// <summary>
/// At most N backend requests at once (a <see cref="SemaphoreSlim"/>), with a bounded queue in front: a request
/// that finds the queue full is refused at once instead of waiting to time out.
/// </summary>
public sealed class ConcurrencyGate : IDisposable
{
    private readonly SemaphoreSlim _slots;
    private readonly int _maxQueue;
    private int _queued;

    public ConcurrencyGate(int maxConcurrency, int maxQueue)
    {
        _slots = new SemaphoreSlim(maxConcurrency, maxConcurrency);
        _maxQueue = maxQueue;
    }

    public int Queued => Volatile.Read(ref _queued);

    /// <summary>Takes a free slot if there is one, without queueing (release it when true).</summary>
    public bool TryEnter() => _slots.Wait(0, CancellationToken.None);

    /// <summary>True once a slot is held (release it); false when the queue is full.</summary>
    public ValueTask<bool> EnterAsync(CancellationToken cancellationToken)
    {
        if (TryEnter())
        {
            return new ValueTask<bool>(true);
        }

        if (Interlocked.Increment(ref _queued) > _maxQueue)
        {
            Interlocked.Decrement(ref _queued);
            return new ValueTask<bool>(false);
        }

        return WaitInQueueAsync(cancellationToken);
    }

    public void Release() => _slots.Release();

    public void Dispose() => _slots.Dispose();

    private async ValueTask<bool> WaitInQueueAsync(CancellationToken cancellationToken)
    {
        try
        {
            await _slots.WaitAsync(cancellationToken);
            return true;
        }
        finally
        {
            Interlocked.Decrement(ref _queued);
        }
    }
}
