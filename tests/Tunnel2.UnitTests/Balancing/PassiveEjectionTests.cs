using Tunnel2.Balancing.Health;

namespace Tunnel2.UnitTests.Balancing;

/// <summary>Passive ejection of one member: after n failures in a row, out for a backoff that doubles up to a ceiling.</summary>
public sealed class PassiveEjectionTests
{
    private const long Frequency = 1000; // timestamps in milliseconds
    private static readonly TimeSpan Backoff = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan MaxBackoff = TimeSpan.FromSeconds(3);

    [Fact]
    public void The_nth_failure_in_a_row_ejects_for_the_backoff_and_the_member_returns_when_it_ends()
    {
        var ejection = new PassiveEjection();

        Assert.False(Fail(ejection, now: 0, out _));
        Assert.False(Fail(ejection, now: 0, out _));
        Assert.True(Fail(ejection, now: 0, out TimeSpan ejectedFor));

        Assert.Equal(Backoff, ejectedFor);
        Assert.True(ejection.IsEjected(999));
        Assert.False(ejection.IsEjected(1000));
    }

    [Fact]
    public void Each_ejection_without_a_good_answer_between_doubles_the_backoff_up_to_the_ceiling()
    {
        var ejection = new PassiveEjection();
        Fail(ejection, 0, out _);
        Fail(ejection, 0, out _);
        Fail(ejection, 0, out _);

        Assert.False(Fail(ejection, now: 500, out _)); // while ejected, a late failure changes nothing
        Assert.True(Fail(ejection, now: 1000, out TimeSpan second));
        Assert.Equal(TimeSpan.FromSeconds(2), second);
        Assert.True(Fail(ejection, now: 3000, out TimeSpan third));
        Assert.Equal(MaxBackoff, third);
    }

    [Fact]
    public void A_good_answer_ends_the_run_and_the_backoff_it_built()
    {
        var ejection = new PassiveEjection();
        for (int i = 0; i < 4; i++)
        {
            Fail(ejection, now: i * 10_000, out _);
        }

        ejection.OnAnswered();

        Assert.False(Fail(ejection, now: 100_000, out _));
        Assert.False(Fail(ejection, now: 100_000, out _));
        Assert.True(Fail(ejection, now: 100_000, out TimeSpan afresh));
        Assert.Equal(Backoff, afresh);
    }

    [Fact]
    public void Zero_failures_in_a_row_means_never_eject()
    {
        var ejection = new PassiveEjection();
        for (int i = 0; i < 100; i++)
        {
            Assert.False(ejection.OnUnreachable(0, Frequency, new EjectionOptions(EjectAfter: 0, Backoff, MaxBackoff), out _));
        }

        Assert.False(ejection.IsEjected(0));
    }

    private static bool Fail(PassiveEjection ejection, long now, out TimeSpan ejectedFor) =>
        ejection.OnUnreachable(now, Frequency, new EjectionOptions(EjectAfter: 3, Backoff, MaxBackoff), out ejectedFor);
}
