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
}
