using System.Diagnostics;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>Waits for a condition by polling, up to a timeout: never a fixed sleep.</summary>
internal static class Eventually
{
    public static async Task<bool> WaitUntilAsync(Func<bool> condition, TimeSpan timeout)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed > timeout)
            {
                return condition();
            }

            await Task.Delay(TimeSpan.FromMilliseconds(5));
        }

        return true;
    }

    /// <summary>Fails the test with <paramref name="what"/> when the condition does not hold within the timeout.</summary>
    public static async Task AssertAsync(Func<bool> condition, string what, TimeSpan? timeout = null)
    {
        if (!await WaitUntilAsync(condition, timeout ?? TestTimeouts.Default))
        {
            Assert.Fail($"Timed out waiting until {what}.");
        }
    }
}

internal static class TestTimeouts
{
    /// <summary>Bounds every wait for something that should happen promptly; generous for a busy 2-core machine.</summary>
    public static readonly TimeSpan Default = TimeSpan.FromSeconds(10);

    public static Task WithTimeout(this Task task) => task.WaitAsync(Default);

    public static Task<T> WithTimeout<T>(this Task<T> task) => task.WaitAsync(Default);

    public static Task<T> WithTimeout<T>(this ValueTask<T> task) => task.AsTask().WaitAsync(Default);
}
