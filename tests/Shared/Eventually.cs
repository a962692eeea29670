using System.Diagnostics;

namespace Tunnel2.Testing;

/// <summary>
/// Waits for a condition by polling it, never by a fixed sleep: the one helper of every test project (linked into each).
/// The waits fail the test with what was awaited when the timeout passes; <c>TryWaitAsync</c> only says whether
/// the condition came true.
/// </summary>
public static class Eventually
{
    /// <summary>Bounds a wait for something that should happen promptly; generous for a busy 2-core machine.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(15);

    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(10);

    public static Task WaitUntilAsync(Func<bool> condition, string because, TimeSpan? timeout = null) =>
        WaitUntilAsync(() => Task.FromResult(condition()), because, timeout);

    public static async Task WaitUntilAsync(Func<Task<bool>> condition, string because, TimeSpan? timeout = null)
    {
        if (!await TryWaitAsync(condition, timeout ?? DefaultTimeout, CancellationToken.None))
        {
            Assert.Fail($"Timed out waiting until {because}.");
        }
    }

    /// <summary>Reads a value until <paramref name="isReady"/> accepts it, and returns it.</summary>
    public static async Task<T> ValueAsync<T>(Func<Task<T>> read, Func<T, bool> isReady, string because, TimeSpan? timeout = null)
    {
        T value = await read();
        await WaitUntilAsync(async () => isReady(value = await read()), because, timeout);
        return value;
    }

    /// <summary>Whether <paramref name="condition"/> came true within <paramref name="timeout"/> (it is asked once more at the end).</summary>
    public static Task<bool> TryWaitAsync(Func<bool> condition, TimeSpan timeout, CancellationToken cancellationToken = default) =>
        TryWaitAsync(() => Task.FromResult(condition()), timeout, cancellationToken);

    private static async Task<bool> TryWaitAsync(Func<Task<bool>> condition, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        while (!await condition())
        {
            if (clock.Elapsed > timeout)
            {
                return await condition();
            }

            await Task.Delay(PollInterval, cancellationToken);
        }

        return true;
    }
}
