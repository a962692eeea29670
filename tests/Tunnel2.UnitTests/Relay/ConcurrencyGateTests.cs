using Tunnel2.TunnelClient.Relay.Admission;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay;

public sealed class ConcurrencyGateTests
{
    [Fact]
    public async Task Slots_are_taken_at_once_then_requests_queue_then_are_refused_at_once()
    {
        using var gate = new ConcurrencyGate(maxConcurrency: 2, maxQueue: 2);

        ValueTask<bool> first = gate.EnterAsync(CancellationToken.None);
        ValueTask<bool> second = gate.EnterAsync(CancellationToken.None);
        Assert.True(first.IsCompletedSuccessfully);
        Assert.True(second.IsCompletedSuccessfully);
        Assert.True(await first);
        Assert.True(await second);

        Task<bool> queued1 = gate.EnterAsync(CancellationToken.None).AsTask();
        Task<bool> queued2 = gate.EnterAsync(CancellationToken.None).AsTask();
        Assert.False(queued1.IsCompleted);
        Assert.False(queued2.IsCompleted);
        Assert.Equal(2, gate.Queued);

        ValueTask<bool> refused = gate.EnterAsync(CancellationToken.None);
        Assert.True(refused.IsCompletedSuccessfully);
        Assert.False(await refused);
        Assert.Equal(2, gate.Queued);

        gate.Release();
        Task<bool> admitted = await Task.WhenAny(queued1, queued2).WithTimeout();
        Assert.True(await admitted);
        Assert.Equal(1, gate.Queued);
        Assert.False((admitted == queued1 ? queued2 : queued1).IsCompleted);
    }

    [Fact]
    public async Task Released_slots_admit_waiters_one_each()
    {
        using var gate = new ConcurrencyGate(maxConcurrency: 1, maxQueue: 10);
        Assert.True(await gate.EnterAsync(CancellationToken.None));
        Task<bool>[] waiters = Enumerable.Range(0, 5).Select(_ => gate.EnterAsync(CancellationToken.None).AsTask()).ToArray();

        for (int admitted = 1; admitted <= 5; admitted++)
        {
            gate.Release();
            await Eventually.WaitUntilAsync(() => waiters.Count(w => w.IsCompleted) == admitted, $"{admitted} waiters are admitted");
            Assert.Equal(5 - admitted, gate.Queued);
        }

        Assert.All(await Task.WhenAll(waiters), Assert.True);
    }

    [Fact]
    public async Task A_cancelled_waiter_gives_up_its_queue_place()
    {
        using var gate = new ConcurrencyGate(maxConcurrency: 1, maxQueue: 1);
        Assert.True(await gate.EnterAsync(CancellationToken.None));
        using var cancel = new CancellationTokenSource();
        Task<bool> waiter = gate.EnterAsync(cancel.Token).AsTask();
        Assert.False(await gate.EnterAsync(CancellationToken.None)); // the queue is full

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiter.WithTimeout());
        Assert.Equal(0, gate.Queued);
        Task<bool> next = gate.EnterAsync(CancellationToken.None).AsTask();
        Assert.False(next.IsCompleted); // queued, not refused
        gate.Release();
        Assert.True(await next.WithTimeout());
    }

    [Fact]
    public async Task A_cancelled_waiter_does_not_consume_a_released_slot()
    {
        using var gate = new ConcurrencyGate(maxConcurrency: 1, maxQueue: 5);
        Assert.True(await gate.EnterAsync(CancellationToken.None));
        using var cancel = new CancellationTokenSource();
        Task<bool> cancelled = gate.EnterAsync(cancel.Token).AsTask();
        Task<bool> patient = gate.EnterAsync(CancellationToken.None).AsTask();

        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled.WithTimeout());
        gate.Release();

        Assert.True(await patient.WithTimeout());
    }

    [Fact]
    public async Task With_no_queue_a_full_gate_refuses_at_once()
    {
        using var gate = new ConcurrencyGate(maxConcurrency: 1, maxQueue: 0);
        Assert.True(await gate.EnterAsync(CancellationToken.None));

        ValueTask<bool> refused = gate.EnterAsync(CancellationToken.None);

        Assert.True(refused.IsCompletedSuccessfully);
        Assert.False(await refused);
        Assert.Equal(0, gate.Queued);
        gate.Release();
        Assert.True(await gate.EnterAsync(CancellationToken.None));
    }

    [Fact]
    public async Task Many_concurrent_users_never_exceed_the_slots()
    {
        using var gate = new ConcurrencyGate(maxConcurrency: 3, maxQueue: 1000);
        int inside = 0;
        int peak = 0;

        await Task.WhenAll(Enumerable.Range(0, 100).Select(_ => Task.Run(async () =>
        {
            Assert.True(await gate.EnterAsync(CancellationToken.None));
            int now = Interlocked.Increment(ref inside);
            InterlockedMax(ref peak, now);
            await Task.Yield();
            Interlocked.Decrement(ref inside);
            gate.Release();
        }))).WithTimeout();

        Assert.InRange(peak, 1, 3);
        Assert.Equal(0, gate.Queued);
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int current;
        while (value > (current = Volatile.Read(ref target)) && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }
}
