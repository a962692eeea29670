namespace Tunnel2.Loops.Scheduling;

/// <summary>The loop's pending timers by deadline (milliseconds of <see cref="Environment.TickCount64"/>); cancelled ones
/// are dropped when they come due.</summary>
internal sealed class TimerList
{
    private readonly PriorityQueue<LoopTimer, long> _timers = new();

    public void Add(LoopTimer timer) => _timers.Enqueue(timer, timer.Deadline);

    /// <summary>epoll_wait's timeout: -1 with nothing pending, else the milliseconds to the next deadline (0 if past).</summary>
    public int MillisecondsToNext(long now)
    {
        while (_timers.TryPeek(out LoopTimer? next, out long deadline))
        {
            if (!next.IsCancelled)
            {
                return (int)Math.Clamp(deadline - now, 0, int.MaxValue);
            }
            _timers.Dequeue();
        }
        return -1;
    }

    public void RunDue(long now, Action<Exception> onFault)
    {
        while (_timers.TryPeek(out LoopTimer? next, out long deadline) && deadline <= now)
        {
            _timers.Dequeue();
            if (next.IsCancelled)
            {
                continue;
            }
            try
            {
                next.Callback(next.State);
            }
            catch (Exception fault)
            {
                onFault(fault);
            }
        }
    }

    public void Clear() => _timers.Clear();
}
