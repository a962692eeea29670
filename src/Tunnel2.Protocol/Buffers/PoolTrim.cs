namespace Tunnel2.Protocol.Buffers;

/// <summary>
/// Gives back, over time, what the process-wide buffer pools keep after a crowd: every period (10 s unless the host
/// sets another, <see cref="BufferPools.SetTrimPeriod"/>), a pool that nobody rented from since the last look lets half
/// of its free buffers go to the collector, so an idle process holds well under a MiB of them a minute after a crowd
/// (Kestrel's block pool evicts idle blocks in the same way, on its heartbeat); a trim that let a MiB or more go then
/// has the collector compact, so the memory goes back to the system. One timer per process, started with the first
/// pool; a pool in use is left alone, so a crowd never pays for the trim.
/// </summary>
internal static class PoolTrim
{
    public static readonly TimeSpan DefaultInterval = TimeSpan.FromSeconds(10);

    private static readonly Timer Timer = new(static _ => TrimShared(), null, DefaultInterval, DefaultInterval);

    /// <summary>Starts the timer (the first touch of this type does).</summary>
    public static void EnsureStarted() => GC.KeepAlive(Timer);

    /// <summary>Trims every <paramref name="interval"/> from now on.</summary>
    public static void SetInterval(TimeSpan interval) => Timer.Change(interval, interval);

    /// <summary>What a trim must let go of before it asks for a collection (less is not worth a compacting pass).</summary>
    public const long CollectAfterBytes = 1024 * 1024;

    private static void TrimShared()
    {
        long released = DataBufferPool.Shared.TrimIfIdle() + InboundBlockPool.Shared.TrimIfIdle();
        if (released >= CollectAfterBytes)
        {
            // Buffers let go are only garbage: an idle process allocates too little for the collector to come by and
            // to give their memory back (RSS measured flat for as long as it was watched), and a collection that does
            // not compact leaves most of it committed. The pools were idle for a whole period, so the pause is no
            // stream's; at most one a period, about six after a crowd as the pools halve
            // (docs/benchmarks/2026-11-29-process-limits.md).
            GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        }
    }
}
