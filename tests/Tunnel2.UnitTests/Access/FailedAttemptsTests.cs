using System.Net;
using Microsoft.Extensions.Time.Testing;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.UnitTests.Access;

/// <summary>The failed-attempt limit shared by the tunnel port's logins and the public port's visitor credentials.</summary>
public sealed class FailedAttemptsTests
{
    private static readonly IPAddress Guesser = IPAddress.Parse("192.0.2.7");
    private static readonly IPAddress Other = IPAddress.Parse("2001:db8::1");

    [Fact]
    public void An_address_gets_exactly_its_limit_of_failures_then_is_blocked_right_or_wrong_until_a_count_refills()
    {
        var time = new FakeTimeProvider();
        using var attempts = new FailedAttempts(perMinute: 3, time);

        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(AttemptVerdict.Failed, attempts.Decide(Guesser, failed: true, out _));
            time.Advance(TimeSpan.FromMilliseconds(100)); // a guesser 100 ms apart: far less than a count's 20 s
        }

        Assert.Equal(AttemptVerdict.Blocked, attempts.Decide(Guesser, failed: true, out TimeSpan retryAfter));
        Assert.Equal(AttemptVerdict.Blocked, attempts.Decide(Guesser, failed: false, out _));
        Assert.InRange(retryAfter, TimeSpan.FromSeconds(19), TimeSpan.FromSeconds(20));
        Assert.Equal(AttemptVerdict.Passed, attempts.Decide(Other, failed: false, out _));
        Assert.Equal(AttemptVerdict.Failed, attempts.Decide(Other, failed: true, out _));

        time.Advance(retryAfter);
        Assert.Equal(AttemptVerdict.Passed, attempts.Decide(Guesser, failed: false, out _));
        Assert.Equal(AttemptVerdict.Failed, attempts.Decide(Guesser, failed: true, out _));
        Assert.Equal(AttemptVerdict.Blocked, attempts.Decide(Guesser, failed: true, out _));
    }

    [Fact]
    public void Sixty_guesses_a_second_apart_get_the_limit_and_then_one_a_count_every_60_over_n_seconds()
    {
        var time = new FakeTimeProvider();
        using var attempts = new FailedAttempts(perMinute: 20, time);
        int failed = 0;
        for (int i = 0; i < 60; i++)
        {
            failed += attempts.Decide(Guesser, failed: true, out _) == AttemptVerdict.Failed ? 1 : 0;
            time.Advance(TimeSpan.FromSeconds(1));
        }

        // 20 at once, then one every 3 s of the 59 that passed: 19 more.
        Assert.Equal(39, failed);
    }

    [Fact]
    public void A_refunded_count_comes_back_and_never_raises_the_bucket_past_its_limit()
    {
        var time = new FakeTimeProvider();
        using var attempts = new FailedAttempts(perMinute: 2, time);
        Assert.Equal(AttemptVerdict.Failed, attempts.Decide(Guesser, failed: true, out _));
        attempts.Refund(Guesser);
        attempts.Refund(Guesser);
        attempts.Refund(Other); // unknown: nothing to give back
        Assert.Equal(AttemptVerdict.Failed, attempts.Decide(Guesser, failed: true, out _));
        Assert.Equal(AttemptVerdict.Failed, attempts.Decide(Guesser, failed: true, out _));
        Assert.Equal(AttemptVerdict.Blocked, attempts.Decide(Guesser, failed: true, out _));
    }

    [Fact]
    public async Task A_crowd_of_1000_concurrent_failures_from_one_address_counts_exactly_the_limit()
    {
        using var attempts = new FailedAttempts(perMinute: 20, new FakeTimeProvider());
        using var start = new ManualResetEventSlim();
        Task<AttemptVerdict>[] guesses = [.. Enumerable.Range(0, 1000).Select(i => Task.Run(() =>
        {
            start.Wait();
            return attempts.Decide(Guesser, failed: true, out _);
        }))];
        start.Set();
        AttemptVerdict[] verdicts = await Task.WhenAll(guesses);

        Assert.Equal(20, verdicts.Count(v => v == AttemptVerdict.Failed));
        Assert.Equal(980, verdicts.Count(v => v == AttemptVerdict.Blocked));
    }

    [Fact]
    public void Buckets_of_many_addresses_that_refilled_are_dropped_and_a_blocked_one_is_kept()
    {
        var time = new FakeTimeProvider();
        using var attempts = new FailedAttempts(perMinute: 60, time);
        while (attempts.Decide(Guesser, failed: true, out _) == AttemptVerdict.Failed)
        {
        }

        for (int i = 0; i < 20_000; i++)
        {
            var address = new IPAddress([10, (byte)(i >> 16), (byte)(i >> 8), (byte)i]);
            Assert.Equal(AttemptVerdict.Failed, attempts.Decide(address, failed: true, out _));
            time.Advance(TimeSpan.FromMilliseconds(1)); // each of these is full again a second later
        }

        Assert.InRange(attempts.TrackedAddresses, 1, 10_000);
        Assert.Equal(AttemptVerdict.Failed, attempts.Decide(Guesser, failed: true, out _)); // 20 s refilled 20 counts, kept
    }
}
