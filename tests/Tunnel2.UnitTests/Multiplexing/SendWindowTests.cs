using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

public sealed class SendWindowTests
{
    [Fact]
    public async Task Grants_at_most_what_is_asked_and_at_most_what_is_left()
    {
        var window = new SendWindow(100);

        Assert.Equal(30, await window.AcquireAsync(30, CancellationToken.None));
        Assert.Equal(70, await window.AcquireAsync(1000, CancellationToken.None));
    }

    [Fact]
    public async Task An_empty_window_waits_until_credit_is_granted()
    {
        var window = new SendWindow(10);
        await window.AcquireAsync(10, CancellationToken.None);

        Task<int> waiting = window.AcquireAsync(50, CancellationToken.None).AsTask();
        Assert.False(waiting.IsCompleted);
        window.Grant(20);

        Assert.Equal(20, await waiting.WithTimeout());
    }

    [Fact]
    public async Task Has_credit_only_while_an_acquire_would_return_at_once()
    {
        var window = new SendWindow(10);
        Assert.True(window.HasCredit);

        await window.AcquireAsync(10, CancellationToken.None);
        Assert.False(window.HasCredit);

        window.Grant(1);
        Assert.True(window.HasCredit);
    }

    [Fact]
    public async Task A_window_starting_at_zero_waits()
    {
        var window = new SendWindow(0);

        Task<int> waiting = window.AcquireAsync(5, CancellationToken.None).AsTask();
        Assert.False(waiting.IsCompleted);
        window.Return(3);

        Assert.Equal(3, await waiting.WithTimeout());
    }

    [Fact]
    public async Task A_fault_fails_waiting_and_later_acquires()
    {
        var window = new SendWindow(0);
        Task<int> waiting = window.AcquireAsync(5, CancellationToken.None).AsTask();
        var reason = new UplinkClosedException("gone");

        window.Fault(reason);
        window.Fault(new StreamResetException(ProtocolErrorCode.Cancelled)); // the first fault stays

        Assert.Same(reason, await Assert.ThrowsAsync<UplinkClosedException>(() => waiting.WithTimeout()));
        Assert.Same(reason, await Assert.ThrowsAsync<UplinkClosedException>(async () => await window.AcquireAsync(1, CancellationToken.None)));
    }

    [Fact]
    public async Task A_fault_wins_over_remaining_credit()
    {
        var window = new SendWindow(100);

        window.Fault(new StreamResetException(ProtocolErrorCode.BackendAborted));

        var error = await Assert.ThrowsAsync<StreamResetException>(async () => await window.AcquireAsync(1, CancellationToken.None));
        Assert.Equal(ProtocolErrorCode.BackendAborted, error.ErrorCode);
    }

    [Fact]
    public void Growing_beyond_int_max_is_a_protocol_violation()
    {
        var window = new SendWindow(int.MaxValue);

        Assert.Throws<ProtocolViolationException>(() => window.Grant(1));
    }

    [Fact]
    public async Task A_cancelled_wait_throws_and_the_window_still_works()
    {
        var window = new SendWindow(0);
        using var cancel = new CancellationTokenSource();
        Task<int> waiting = window.AcquireAsync(5, cancel.Token).AsTask();

        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting.WithTimeout());
        window.Grant(4);

        Assert.Equal(4, await window.AcquireAsync(5, CancellationToken.None));
    }

    [Fact]
    public async Task A_token_cancelled_before_the_wait_fails_it_at_once_and_the_window_keeps_its_credit_for_the_next()
    {
        var window = new SendWindow(0);
        using var cancel = new CancellationTokenSource();
        await cancel.CancelAsync();

        ValueTask<int> waiting = window.AcquireAsync(5, cancel.Token);

        Assert.True(waiting.IsCompleted);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await waiting);
        window.Grant(3);
        Assert.Equal(3, await window.AcquireAsync(5, CancellationToken.None));
    }

    [Fact]
    public async Task Cancelling_the_token_of_an_ended_wait_leaves_a_later_wait_with_another_token_waiting()
    {
        var window = new SendWindow(0);
        using var first = new CancellationTokenSource();
        using var second = new CancellationTokenSource();
        ValueTask<int> firstWait = window.AcquireAsync(5, first.Token);
        window.Grant(5);
        Assert.Equal(5, await firstWait);

        Task<int> secondWait = window.AcquireAsync(5, second.Token).AsTask();
        await first.CancelAsync();

        Assert.False(secondWait.IsCompleted);
        window.Grant(2);
        Assert.Equal(2, await secondWait.WithTimeout());
    }

    [Fact]
    public void A_wait_and_its_grant_allocate_nothing_once_warm()
    {
        var window = new SendWindow(0);
        using var cancel = new CancellationTokenSource(); // a request's token: the wait registers on it
        long sum = WaitAndGrant(window, cancel.Token); // warm: first calls may JIT and allocate

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1_000; i++)
        {
            sum += WaitAndGrant(window, cancel.Token);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.Equal(1_001 * 10, sum);
    }

    [Fact]
    public async Task A_crowd_of_waits_racing_grants_faults_and_cancellation_ends_each_wait_exactly_once()
    {
        const int Streams = 64;
        const int WaitsEach = 500;
        Task[] senders = [.. Enumerable.Range(0, Streams).Select(stream => Task.Run(async () =>
        {
            var window = new SendWindow(0);
            for (int i = 0; i < WaitsEach; i++)
            {
                using var cancel = new CancellationTokenSource();
                ValueTask<int> waiting = window.AcquireAsync(10, cancel.Token);
                Task racer = (i % 3) switch
                {
                    0 => Task.Run(() => window.Grant(10)),
                    1 => Task.WhenAll(Task.Run(() => window.Grant(10)), cancel.CancelAsync()),
                    _ => Task.WhenAll(Task.Run(() => window.Grant(10)), Task.Run(() => window.Fault(new StreamResetException(ProtocolErrorCode.Cancelled)))),
                };
                try
                {
                    Assert.InRange(await waiting, 1, 10);
                }
                catch (Exception ended) when (ended is OperationCanceledException or StreamResetException)
                {
                }

                await racer;
                window.Reset(0);
            }
        }))];

        await Task.WhenAll(senders).WithTimeout(); // a wait ended twice throws; one never ended times out
    }

    /// <summary>One wait on an empty window and the grant that ends it, on this thread: the wait has completed before it is read.</summary>
    private static long WaitAndGrant(SendWindow window, CancellationToken cancellationToken)
    {
        ValueTask<int> waiting = window.AcquireAsync(10, cancellationToken);
        window.Grant(10);
        return waiting.IsCompleted ? waiting.Result : -1;
    }
}
