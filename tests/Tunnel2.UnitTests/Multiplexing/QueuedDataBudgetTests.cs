using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

public sealed class QueuedDataBudgetTests
{
    [Fact]
    public async Task Reserves_at_once_within_the_limit_and_waits_beyond_it_until_bytes_come_back()
    {
        var budget = new QueuedDataBudget(100);
        await budget.ReserveAsync(60, light: false, CancellationToken.None);

        Task waiting = budget.ReserveAsync(50, light: false, CancellationToken.None).AsTask();
        Assert.False(waiting.IsCompleted);
        Assert.Equal(60, budget.Reserved);

        budget.Release(5);
        Assert.False(waiting.IsCompleted); // 55 + 50 is still over the limit
        budget.Release(5);
        await waiting.WithTimeout(); // 50 + 50 fits exactly
        Assert.Equal(100, budget.Reserved);
    }

    [Fact]
    public async Task An_empty_budget_admits_one_reservation_larger_than_the_limit()
    {
        var budget = new QueuedDataBudget(100);

        await budget.ReserveAsync(300, light: false, CancellationToken.None).AsTask().WithTimeout();

        Assert.False(budget.TryReserveNow(1));
        budget.Release(300);
        Assert.True(budget.TryReserveNow(1));
    }

    [Fact]
    public async Task Waiters_are_admitted_in_order_and_light_ones_before_bulk()
    {
        var budget = new QueuedDataBudget(10);
        await budget.ReserveAsync(10, light: false, CancellationToken.None);
        var admitted = new List<string>();
        Task Wait(string name, bool light) => budget.ReserveAsync(10, light, CancellationToken.None).AsTask().ContinueWith(_ => { lock (admitted) { admitted.Add(name); } }, TaskScheduler.Default);

        Task bulk1 = Wait("bulk1", light: false);
        Task bulk2 = Wait("bulk2", light: false);
        Task light1 = Wait("light1", light: true);

        budget.Release(10);
        await light1.WithTimeout();
        budget.Release(10);
        await bulk1.WithTimeout();
        budget.Release(10);
        await bulk2.WithTimeout();

        Assert.Equal(["light1", "bulk1", "bulk2"], admitted);
    }

    [Fact]
    public async Task A_cancelled_waiter_reserves_nothing_and_does_not_hold_up_the_next()
    {
        var budget = new QueuedDataBudget(10);
        await budget.ReserveAsync(10, light: false, CancellationToken.None);
        using var cancel = new CancellationTokenSource();
        Task first = budget.ReserveAsync(10, light: false, cancel.Token).AsTask();
        Task second = budget.ReserveAsync(10, light: false, CancellationToken.None).AsTask();

        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => first.WithTimeout());
        budget.Release(10);

        await second.WithTimeout();
        Assert.Equal(10, budget.Reserved);
    }

    [Fact]
    public async Task Closing_fails_the_waiters_and_later_waits()
    {
        var budget = new QueuedDataBudget(10);
        await budget.ReserveAsync(10, light: false, CancellationToken.None);
        Task waiting = budget.ReserveAsync(5, light: true, CancellationToken.None).AsTask();

        budget.Close(new UplinkClosedException("gone"));

        await Assert.ThrowsAsync<UplinkClosedException>(() => waiting.WithTimeout());
        await Assert.ThrowsAsync<UplinkClosedException>(async () => await budget.ReserveAsync(5, light: false, CancellationToken.None));
    }

    [Fact]
    public void A_limit_of_zero_bounds_nothing()
    {
        var budget = new QueuedDataBudget(0);

        Assert.True(budget.ReserveAsync(int.MaxValue, light: false, CancellationToken.None).AsTask().IsCompletedSuccessfully);
        Assert.True(budget.TryReserveNow(int.MaxValue));
    }

    [Fact]
    public async Task A_crowd_of_1000_reservers_never_holds_more_than_the_limit_and_all_get_their_turn()
    {
        const int limit = 64 * 1024;
        const int frame = 16 * 1024;
        var budget = new QueuedDataBudget(limit);
        long held = 0;
        long mostHeld = 0;

        async Task OneAsync(int i)
        {
            await Task.Yield();
            await budget.ReserveAsync(frame, light: i % 7 == 0, CancellationToken.None);
            long now = Interlocked.Add(ref held, frame);
            long seen;
            while ((seen = Volatile.Read(ref mostHeld)) < now && Interlocked.CompareExchange(ref mostHeld, now, seen) != seen)
            {
            }

            await Task.Yield(); // the frame waits for the writer
            Interlocked.Add(ref held, -frame);
            budget.Release(frame);
        }

        await Task.WhenAll(Enumerable.Range(0, 1000).Select(OneAsync)).WithTimeout();

        Assert.InRange(Volatile.Read(ref mostHeld), frame, limit);
        Assert.Equal(0, budget.Reserved);
    }
}
