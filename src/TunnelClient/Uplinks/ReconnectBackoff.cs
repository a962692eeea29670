namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// Capped exponential backoff with jitter: attempt n waits between half and all of min(max, min·2ⁿ), so that many
/// clients cut off together do not come back in lockstep.
/// </summary>
public sealed class ReconnectBackoff(TimeSpan minDelay, TimeSpan maxDelay)
{
    public TimeSpan NextDelay(int attempt, Random random)
    {
        double ceiling = Math.Min(maxDelay.TotalMilliseconds, minDelay.TotalMilliseconds * Math.Pow(2, Math.Min(attempt, 30)));
        double delay = (ceiling / 2) + (random.NextDouble() * ceiling / 2);
        return TimeSpan.FromMilliseconds(delay);
    }
}
