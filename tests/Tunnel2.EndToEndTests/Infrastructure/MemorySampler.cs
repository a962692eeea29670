using System.Diagnostics;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Samples a process's resident memory while a transfer runs and reports the peak growth over the start.</summary>
public sealed class MemorySampler : IAsyncDisposable
{
    private readonly Func<long> _rss;
    private readonly long _baseline;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;
    private long _peak;

    private MemorySampler(Func<long> rss)
    {
        _rss = rss;
        _baseline = rss();
        _peak = _baseline;
        _sampling = SampleAsync();
    }

    public long PeakGrowthBytes => Math.Max(0, Interlocked.Read(ref _peak) - _baseline);

    /// <summary>Samples this test process (everything hosted in it together).</summary>
    public static MemorySampler Start()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        return new MemorySampler(static () =>
        {
            using Process self = Process.GetCurrentProcess();
            return self.WorkingSet64;
        });
    }

    /// <summary>Samples one other process (e.g. a TunnelServer started by <see cref="TunnelProcess"/>).</summary>
    public static MemorySampler Start(int processId)
    {
        Process process = Process.GetProcessById(processId);
        return new MemorySampler(() =>
        {
            try
            {
                process.Refresh();
                return process.HasExited ? 0 : process.WorkingSet64;
            }
            catch (InvalidOperationException)
            {
                return 0; // it exited between the two reads (a test that stops the process while sampling)
            }
        });
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _sampling;
        _stop.Dispose();
    }

    private async Task SampleAsync()
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(25));
        try
        {
            while (await timer.WaitForNextTickAsync(_stop.Token))
            {
                long now = _rss();
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
