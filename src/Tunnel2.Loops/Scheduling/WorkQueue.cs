using System.Collections.Concurrent;

namespace Tunnel2.Loops.Scheduling;

/// <summary>Work posted from any thread, run on the loop in the order posted (per poster).</summary>
internal sealed class WorkQueue
{
    private readonly ConcurrentQueue<WorkItem> _items = new();

    public bool IsEmpty => _items.IsEmpty;

    public void Enqueue(WorkItem item) => _items.Enqueue(item);

    /// <summary>Runs what was queued when it started; work posted meanwhile waits for the next turn, so that a callback
    /// that posts again cannot starve the descriptors.</summary>
    public void RunQueued(Action<Exception> onFault)
    {
        if (_items.IsEmpty)
        {
            return;
        }
        for (int count = _items.Count; count > 0 && _items.TryDequeue(out WorkItem item); count--)
        {
            try
            {
                item.Run();
            }
            catch (Exception fault)
            {
                onFault(fault);
            }
        }
    }
}
