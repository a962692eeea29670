namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Bounds the body bytes that wait in the streams' queues for the uplink's writer. A body read from a source (the
/// client's backend socket) reserves room here before it is read, once it has the stream's credit; the room comes back
/// when the writer takes the frame. While the uplink cannot send as fast as the streams have credit for (a crowd of
/// slow callers, a squeezed socket), the bytes stay in the source's socket instead of in this process: without it, each
/// of 9,700 slow streams kept one 16 KiB frame here (~160 MiB, docs/benchmarks/2026-11-24-storm.md). Waiters are
/// admitted first in, first out, so streams take turns; but, as in the <see cref="FrameScheduler"/>'s lanes, a stream
/// that has sent little so far (a new answer) goes before every bulk transfer waiting. An empty budget admits any one
/// reservation, however large.
/// </summary>
internal sealed class QueuedDataBudget
{
    private readonly long _limit;
    private readonly Lock _sync = new();
    private readonly Queue<Waiter> _light = new();
    private readonly Queue<Waiter> _bulk = new();
    private long _reserved;
    private int _waiting;
    private Exception? _closed;

    /// <param name="limit">Most bytes reserved at once; 0 or less turns the bound off.</param>
    public QueuedDataBudget(long limit) => _limit = limit;

    /// <summary>Bytes reserved now: frames queued for the writer, and reads under way that will become frames.</summary>
    public long Reserved => Volatile.Read(ref _reserved);

    /// <summary>Reservations waiting their turn (for tests and diagnostics).</summary>
    public int Waiting => Volatile.Read(ref _waiting);

    /// <summary>Waits until <paramref name="bytes"/> fit (or nothing is reserved), then reserves them.</summary>
    /// <param name="light">The stream has sent less than <see cref="FrameScheduler.LightStreamBytes"/>: it waits ahead of bulk streams.</param>
    /// <exception cref="UplinkClosedException">The uplink stopped sending before there was room.</exception>
    public ValueTask ReserveAsync(int bytes, bool light, CancellationToken cancellationToken)
    {
        if (_limit <= 0)
        {
            return ValueTask.CompletedTask;
        }

        if (TryReserveNow(bytes))
        {
            return ValueTask.CompletedTask;
        }

        return WaitAsync(bytes, light, cancellationToken);
    }

    /// <summary>Reserves <paramref name="bytes"/> when that needs no wait; false when the caller would have to wait its turn.</summary>
    public bool TryReserveNow(int bytes) => _limit <= 0 || (Volatile.Read(ref _waiting) == 0 && TryReserve(bytes));

    /// <summary>Gives back reserved bytes (a frame the writer took or dropped, or a read that came back short).</summary>
    public void Release(int bytes)
    {
        if (_limit <= 0 || bytes <= 0)
        {
            return;
        }

        // Interlocked on both sides (here the reserved count, in WaitAsync the waiting count) so that either this
        // release sees the new waiter or the waiter sees the room this release made.
        Interlocked.Add(ref _reserved, -bytes);
        if (Volatile.Read(ref _waiting) > 0)
        {
            AdmitWaiters();
        }
    }

    /// <summary>Fails every waiter and every later reservation that has to wait: the uplink no longer sends.</summary>
    public void Close(Exception reason)
    {
        lock (_sync)
        {
            _closed ??= reason;
            while (_light.TryDequeue(out Waiter? waiter) || _bulk.TryDequeue(out waiter))
            {
                Interlocked.Decrement(ref _waiting);
                waiter.TrySetException(reason);
            }
        }
    }

    private bool TryReserve(int bytes)
    {
        while (true)
        {
            long reserved = Volatile.Read(ref _reserved);
            if (reserved > 0 && reserved + bytes > _limit)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _reserved, reserved + bytes, reserved) == reserved)
            {
                return true;
            }
        }
    }

    private async ValueTask WaitAsync(int bytes, bool light, CancellationToken cancellationToken)
    {
        Waiter waiter;
        lock (_sync)
        {
            if (_closed is not null)
            {
                throw _closed;
            }

            Interlocked.Increment(ref _waiting);
            if (_light.Count == 0 && (light || _bulk.Count == 0) && TryReserve(bytes))
            {
                Interlocked.Decrement(ref _waiting);
                return;
            }

            waiter = new Waiter(bytes);
            (light ? _light : _bulk).Enqueue(waiter);
        }

        using (cancellationToken.UnsafeRegister(static (state, token) => ((Waiter)state!).TrySetCanceled(token), waiter))
        {
            await waiter.Task.ConfigureAwait(false);
        }
    }

    private void AdmitWaiters()
    {
        lock (_sync)
        {
            while (true)
            {
                Queue<Waiter> lane = _light.Count > 0 ? _light : _bulk;
                if (!lane.TryPeek(out Waiter? first))
                {
                    return;
                }

                if (first.Task.IsCompleted)
                {
                    // Cancelled while it waited: it reserved nothing.
                    lane.Dequeue();
                    Interlocked.Decrement(ref _waiting);
                    continue;
                }

                if (!TryReserve(first.Bytes))
                {
                    return;
                }

                lane.Dequeue();
                Interlocked.Decrement(ref _waiting);
                if (!first.TrySetResult())
                {
                    Interlocked.Add(ref _reserved, -first.Bytes); // cancelled just now: take the room back
                }
            }
        }
    }

    private sealed class Waiter(int bytes) : TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        public int Bytes { get; } = bytes;
    }
}
