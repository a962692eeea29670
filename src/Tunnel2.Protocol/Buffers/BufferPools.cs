namespace Tunnel2.Protocol.Buffers;

/// <summary>The host's say over the process-wide buffer pools of the uplinks' streams (docs/protocol.md, "Body buffers are reused").</summary>
public static class BufferPools
{
    /// <summary>How often an idle pool lets half of its free buffers go unless the host says otherwise.</summary>
    public static TimeSpan DefaultTrimPeriod => PoolTrim.DefaultInterval;

    /// <summary>Sets how often a pool nobody rented from since the last look lets half of its free buffers go.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="period"/> is not positive.</exception>
    public static void SetTrimPeriod(TimeSpan period)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(period, TimeSpan.Zero);
        PoolTrim.SetInterval(period);
    }
}
