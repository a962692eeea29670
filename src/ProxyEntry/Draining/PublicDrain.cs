using Tunnel2.Protocol.Draining;

namespace Tunnel2.ProxyEntry.Draining;

/// <summary>
/// The public side's part of a graceful server shutdown: once <see cref="Begin"/> is called new public requests get
/// 503 with Retry-After, and <see cref="WaitIdleAsync"/> waits for the ones in flight (woken by the last one's end).
/// </summary>
public sealed class PublicDrain
{
    private readonly InFlightCounter _inFlight = new();
    private volatile bool _draining;
    private long _upgraded;

    public bool IsDraining => _draining;

    /// <summary>Public requests being forwarded now.</summary>
    public long InFlight => _inFlight.Count;

    /// <summary>Of <see cref="InFlight"/>, the connections switched to another protocol: they end only when a side closes.</summary>
    public long Upgraded => Interlocked.Read(ref _upgraded);

    public void Begin() => _draining = true;

    internal void RequestStarted() => _inFlight.Increment();

    internal void RequestEnded() => _inFlight.Decrement();

    internal void UpgradeStarted() => Interlocked.Increment(ref _upgraded);

    internal void UpgradeEnded() => Interlocked.Decrement(ref _upgraded);

    /// <summary>Waits until no public request is in flight; false when <paramref name="timeout"/> passed first.</summary>
    public Task<bool> WaitIdleAsync(TimeSpan timeout) => _inFlight.WaitIdleAsync(timeout);
}
