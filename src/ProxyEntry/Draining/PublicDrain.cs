namespace Tunnel2.ProxyEntry.Draining;

/// <summary>
/// The public side's part of a graceful server shutdown: once <see cref="Begin"/> is called new public requests get
/// 503 with Retry-After, and <see cref="WaitIdleAsync"/> waits for the ones in flight.
/// </summary>
public sealed class PublicDrain
{
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(20);

    private volatile bool _draining;
    private long _inFlight;
    private long _upgraded;

    public bool IsDraining => _draining;

    /// <summary>Public requests being forwarded now.</summary>
    public long InFlight => Interlocked.Read(ref _inFlight);

    /// <summary>Of <see cref="InFlight"/>, the connections switched to another protocol: they end only when a side closes.</summary>
    public long Upgraded => Interlocked.Read(ref _upgraded);

    public void Begin() => _draining = true;

    internal void RequestStarted() => Interlocked.Increment(ref _inFlight);

    internal void RequestEnded() => Interlocked.Decrement(ref _inFlight);

    internal void UpgradeStarted() => Interlocked.Increment(ref _upgraded);

    internal void UpgradeEnded() => Interlocked.Decrement(ref _upgraded);

    /// <summary>Waits until no public request is in flight; false when <paramref name="timeout"/> passed first.</summary>
    public async Task<bool> WaitIdleAsync(TimeSpan timeout)
    {
        long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
        while (InFlight > 0)
        {
            if (Environment.TickCount64 >= deadline)
            {
                return false;
            }

            await Task.Delay(PollInterval).ConfigureAwait(false);
        }

        return true;
    }
}
