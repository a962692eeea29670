namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Percentiles of latency samples, for the correctness checks that compare latencies with and without a crowd.</summary>
public static class Latencies
{
    /// <summary>The nearest-rank percentile: the smallest sample at or above <paramref name="rank"/> of them (0.5 = median).</summary>
    public static double Percentile(double[] samples, double rank)
    {
        double[] sorted = [.. samples];
        Array.Sort(sorted);
        return sorted[(int)Math.Ceiling(sorted.Length * rank) - 1];
    }
}
