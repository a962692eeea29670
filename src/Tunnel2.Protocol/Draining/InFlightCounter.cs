namespace Tunnel2.Protocol.Draining;

/// <summary>
/// What is in flight (public requests, TCP connections, an uplink's streams) and a wait for none, told by the decrement
/// that reaches zero rather than found by polling: a drain ends the moment its last exchange does, and an idle drain
/// costs no timer. Counting is two interlocked operations; only a waiter allocates.
/// </summary>
public sealed class InFlightCounter
{
    private long _count;
    private TaskCompletionSource? _idle;

    /// <summary>In flight now.</summary>
    public long Count => Volatile.Read(ref _count);

    public void Increment() => Interlocked.Increment(ref _count);

    /// <summary>One ended; the one that leaves none wakes the waiters.</summary>
    public void Decrement()
    {
        if (Interlocked.Decrement(ref _count) == 0)
        {
            Volatile.Read(ref _idle)?.TrySetResult();
        }
    }

    /// <summary>
    /// True once nothing is in flight (at once when nothing is now); false when <paramref name="timeout"/> passed or
    /// <paramref name="cancellationToken"/> fired first. Never throws for either.
    /// </summary>
    public async Task<bool> WaitIdleAsync(TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        if (Count <= 0)
        {
            return true;
        }

        TaskCompletionSource idle = Waiter();

        // Checked again after the waiter is published: a decrement to zero before that found no waiter to wake.
        if (Count <= 0)
        {
            return true;
        }

        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        Task first = await Task.WhenAny(idle.Task, Task.Delay(timeout, stop.Token)).ConfigureAwait(false);
        await stop.CancelAsync().ConfigureAwait(false); // the delay's timer goes with it
        return first == idle.Task;
    }

    /// <summary>The waiters' signal: the current one, or a fresh one when the last was spent (the count rose again since).</summary>
    private TaskCompletionSource Waiter()
    {
        while (true)
        {
            TaskCompletionSource? current = Volatile.Read(ref _idle);
            if (current is not null && !current.Task.IsCompleted)
            {
                return current;
            }

            var fresh = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            if (Interlocked.CompareExchange(ref _idle, fresh, current) == current)
            {
                return fresh;
            }
        }
    }
}
