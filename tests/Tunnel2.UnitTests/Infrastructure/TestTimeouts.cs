namespace Tunnel2.UnitTests.Infrastructure;

internal static class TestTimeouts
{
    /// <summary>Bounds every wait for something that should happen promptly; generous for a busy 2-core machine.</summary>
    public static readonly TimeSpan Default = TimeSpan.FromSeconds(10);

    public static Task WithTimeout(this Task task) => task.WaitAsync(Default);

    public static Task<T> WithTimeout<T>(this Task<T> task) => task.WaitAsync(Default);

    public static Task<T> WithTimeout<T>(this ValueTask<T> task) => task.AsTask().WaitAsync(Default);
}
