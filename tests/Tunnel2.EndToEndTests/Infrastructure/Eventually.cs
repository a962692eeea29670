namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Waits for a condition by polling it, failing with a message when the timeout passes. No fixed sleeps.</summary>
public static class Eventually
{
    public static async Task WaitUntilAsync(Func<bool> condition, string because, TimeSpan? timeout = null)
    {
        await WaitUntilAsync(() => Task.FromResult(condition()), because, timeout);
    }

    public static async Task WaitUntilAsync(Func<Task<bool>> condition, string because, TimeSpan? timeout = null)
    {
        DateTime deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(15));
        while (true)
        {
            if (await condition())
            {
                return;
            }

            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Timed out waiting until {because}.");
            }

            await Task.Delay(20);
        }
    }

    /// <summary>Reads a value until <paramref name="isReady"/> accepts it, and returns it.</summary>
    public static async Task<T> ValueAsync<T>(Func<Task<T>> read, Func<T, bool> isReady, string because, TimeSpan? timeout = null)
    {
        T value = await read();
        await WaitUntilAsync(async () => isReady(value = await read()), because, timeout);
        return value;
    }
}
