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
}
