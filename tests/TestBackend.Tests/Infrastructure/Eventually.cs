using System.Diagnostics;

namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>Waits for a condition by polling, up to a timeout: never a fixed sleep.</summary>
internal static class Eventually
{
    public static async Task<bool> WaitUntilAsync(Func<bool> condition, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed > timeout)
            {
                return condition();
            }

            await Task.Delay(TimeSpan.FromMilliseconds(5), cancellationToken);
        }

        return true;
    }
}
