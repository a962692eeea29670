namespace Tunnel2.Protocol.Buffers;

/// <summary>
/// Gives back, over time, what the process-wide buffer pools keep after a crowd: every
/// <see cref="Interval"/>, a pool that nobody rented from since the last look lets half of its free buffers go to the
/// collector, so an idle process holds well under a MiB of them a minute after a crowd (Kestrel's block pool evicts
/// idle blocks in the same way, on its heartbeat). One timer per process, started with the first pool; a pool in use is
/// left alone, so a crowd never pays for the trim.
/// </summary>
internal static class PoolTrim
{
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(10);

    private static readonly Timer Timer = new(static _ => TrimShared(), null, Interval, Interval);

    /// <summary>Starts the timer (the first touch of this type does).</summary>
    public static void EnsureStarted() => GC.KeepAlive(Timer);

    private static void TrimShared()
    {
        DataBufferPool.Shared.TrimIfIdle();
        InboundBlockPool.Shared.TrimIfIdle();
    }
}
