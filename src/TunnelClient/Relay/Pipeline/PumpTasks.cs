namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>Body pumps the exchange leaves behind.</summary>
internal static class PumpTasks
{
    /// <summary>A request-body pump left running when the exchange ended: its failure is expected and must not go unobserved.</summary>
    public static void Observe(Task task) =>
        task.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
}
