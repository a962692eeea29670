using Tunnel2.Protocol.Draining;

namespace Tunnel2.UnitTests.Draining;

/// <summary>The one in-flight counter every drain waits on: told by the decrement that reaches zero, not by polling.</summary>
public sealed class InFlightCounterTests
{
    [Fact]
    public async Task A_wait_with_nothing_in_flight_completes_at_once()
    {
        var counter = new InFlightCounter();

        Task<bool> idle = counter.WaitIdleAsync(Timeout.InfiniteTimeSpan);

        Assert.True(idle.IsCompletedSuccessfully); // synchronously: no timer, no poll
        Assert.True(await idle);
    }

    [Fact]
    public async Task The_wait_completes_when_the_last_one_ends_and_not_before()
    {
        var counter = new InFlightCounter();
        counter.Increment();
        counter.Increment();

        Task<bool> idle = counter.WaitIdleAsync(Timeout.InfiniteTimeSpan);
        counter.Decrement();
        Assert.False(idle.IsCompleted);
        Assert.Equal(1, counter.Count);

        counter.Decrement();

        // No poll interval to wait out: an infinite timeout, and the decrement itself completes the wait.
        Assert.True(await idle.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Equal(0, counter.Count);
    }

    [Fact]
    public async Task A_wait_that_times_out_says_false_and_a_later_wait_sees_the_count_again()
    {
        var counter = new InFlightCounter();
        counter.Increment();

        Assert.False(await counter.WaitIdleAsync(TimeSpan.FromMilliseconds(20)));

        counter.Decrement();
        counter.Increment(); // idle was reached once; a new wait waits for the next zero
        Task<bool> again = counter.WaitIdleAsync(Timeout.InfiniteTimeSpan);
        Assert.False(again.IsCompleted);
        counter.Decrement();
        Assert.True(await again.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task A_canceled_wait_says_false_without_throwing()
    {
        var counter = new InFlightCounter();
        counter.Increment();
        using var cancel = new CancellationTokenSource();

        Task<bool> idle = counter.WaitIdleAsync(Timeout.InfiniteTimeSpan, cancel.Token);
        await cancel.CancelAsync();

        Assert.False(await idle.WaitAsync(TimeSpan.FromSeconds(10)));
    }
}
