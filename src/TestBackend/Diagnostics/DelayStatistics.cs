namespace Tunnel2.TestBackend.Diagnostics;

/// <summary>
/// Counts the waits of <c>/loadtest/delay/{ms}</c>. A singleton in the app's services; end-to-end tests
/// read <see cref="CancelledWaits"/> to prove that a caller who went away (through the tunnel) ended the
/// backend's wait early. Also served as JSON by <c>GET /loadtest/stats</c>.
/// </summary>
public sealed class DelayStatistics
{
    private long _activeWaits;
    private long _completedWaits;
    private long _cancelledWaits;
    private long _peakActiveWaits;

    /// <summary>Waits in progress right now.</summary>
    public long ActiveWaits => Interlocked.Read(ref _activeWaits);

    /// <summary>The most waits that were in progress at the same time since start.</summary>
    public long PeakActiveWaits => Interlocked.Read(ref _peakActiveWaits);

    /// <summary>Waits that ran their full time and answered 200.</summary>
    public long CompletedWaits => Interlocked.Read(ref _completedWaits);

    /// <summary>Waits ended early because the caller aborted the request.</summary>
    public long CancelledWaits => Interlocked.Read(ref _cancelledWaits);

    internal void WaitStarted()
    {
        long active = Interlocked.Increment(ref _activeWaits);
        long peak = Interlocked.Read(ref _peakActiveWaits);
        while (active > peak)
        {
            long seen = Interlocked.CompareExchange(ref _peakActiveWaits, active, peak);
            if (seen == peak)
            {
                break;
            }

            peak = seen;
        }
    }

    internal void WaitCompleted()
    {
        Interlocked.Increment(ref _completedWaits);
        Interlocked.Decrement(ref _activeWaits);
    }

    internal void WaitCancelled()
    {
        Interlocked.Increment(ref _cancelledWaits);
        Interlocked.Decrement(ref _activeWaits);
    }
}
