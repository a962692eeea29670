using System.Diagnostics;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Samples this process's resident memory while a transfer runs and reports the peak growth over the start.</summary>
public sealed class MemorySampler : IAsyncDisposable
{
    private readonly long _baseline;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;
    private long _peak;

    private MemorySampler()
    {
        _baseline = CurrentRss();
        _peak = _baseline;
        _sampling = SampleAsync();
    }

    public long PeakGrowthBytes => Math.Max(0, Interlocked.Read(ref _peak) - _baseline);

    public static MemorySampler Start()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        return new MemorySampler();
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _sampling;
        _stop.Dispose();
    }

    private static long CurrentRss()
    {
        using Process self = Process.GetCurrentProcess();
        return self.WorkingSet64;
    }

    private async Task SampleAsync()
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(25));
        try
        {
            while (await timer.WaitForNextTickAsync(_stop.Token))
            {
                long now = CurrentRss();
                if (now > Interlocked.Read(ref _peak))
                {
                    Interlocked.Exchange(ref _peak, now);
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Stopped.
        }
    }
}
