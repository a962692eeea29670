using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.UnitTests.ClientUplinks;

public sealed class ReconnectBackoffTests
{
    private static readonly TimeSpan Min = TimeSpan.FromMilliseconds(250);
    private static readonly TimeSpan Max = TimeSpan.FromSeconds(30);

    /// <summary>The ceiling for an attempt: min·2ⁿ capped at max.</summary>
    private static double CeilingMs(int attempt) => Math.Min(Max.TotalMilliseconds, Min.TotalMilliseconds * Math.Pow(2, Math.Min(attempt, 30)));

    [Fact]
    public void Delays_stay_between_half_the_ceiling_and_the_ceiling()
    {
        var backoff = new ReconnectBackoff(Min, Max);
        var random = new Random(2026);

        for (int attempt = 0; attempt < 40; attempt++)
        {
            double ceiling = CeilingMs(attempt);
            for (int sample = 0; sample < 200; sample++)
            {
                double delay = backoff.NextDelay(attempt, random).TotalMilliseconds;
                Assert.InRange(delay, (ceiling / 2) - 0.001, ceiling + 0.001);
            }
        }
    }

    [Theory]
    [InlineData(0, 250)]
    [InlineData(1, 500)]
    [InlineData(2, 1000)]
    [InlineData(3, 2000)]
    [InlineData(6, 16000)]
    [InlineData(7, 30000)]
    [InlineData(8, 30000)]
    public void The_ceiling_doubles_per_attempt_and_caps_at_the_maximum(int attempt, double ceilingMs)
    {
        var backoff = new ReconnectBackoff(Min, Max);

        Assert.Equal(ceilingMs, backoff.NextDelay(attempt, new FixedRandom(1.0)).TotalMilliseconds, 3);
        Assert.Equal(ceilingMs / 2, backoff.NextDelay(attempt, new FixedRandom(0.0)).TotalMilliseconds, 3);
    }

    [Theory]
    [InlineData(31)]
    [InlineData(64)]
    [InlineData(1_000)]
    [InlineData(int.MaxValue)]
    public void Huge_attempt_numbers_do_not_overflow(int attempt)
    {
        var backoff = new ReconnectBackoff(Min, Max);

        TimeSpan delay = backoff.NextDelay(attempt, new FixedRandom(1.0));

        Assert.Equal(Max, delay);
    }

    [Fact]
    public void Huge_attempt_numbers_stay_capped_even_with_a_huge_maximum()
    {
        var backoff = new ReconnectBackoff(TimeSpan.FromSeconds(1), TimeSpan.FromDays(100_000));

        TimeSpan delay = backoff.NextDelay(int.MaxValue, new FixedRandom(1.0));

        Assert.Equal(TimeSpan.FromSeconds(1) * Math.Pow(2, 30), delay);
    }

    [Fact]
    public void Jitter_spreads_the_delays()
    {
        var backoff = new ReconnectBackoff(Min, Max);
        var random = new Random(7);

        var delays = Enumerable.Range(0, 100).Select(_ => backoff.NextDelay(5, random)).Distinct().ToList();

        Assert.True(delays.Count > 90, $"only {delays.Count} distinct delays out of 100");
    }

    /// <summary>A <see cref="Random"/> whose NextDouble always returns the same value (1.0 stands for the top of the range).</summary>
    private sealed class FixedRandom(double value) : Random
    {
        public override double NextDouble() => value;
    }
}
