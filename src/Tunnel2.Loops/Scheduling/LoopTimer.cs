namespace Tunnel2.Loops.Scheduling;

/// <summary>
/// A callback due on the loop at a deadline, from <c>EventLoop.Schedule</c>. One timer per connection, re-armed when it
/// fires, is the cheap way to an idle timeout: record the last activity and, when the timer fires, either act or
/// schedule again for the rest; never a new timer per message.
/// </summary>
public sealed class LoopTimer
{
    private volatile bool _cancelled;

    internal LoopTimer(long deadline, Action<object?> callback, object? state)
    {
        Deadline = deadline;
        Callback = callback;
        State = state;
    }

    internal long Deadline { get; }

    internal Action<object?> Callback { get; }

    internal object? State { get; }

    public bool IsCancelled => _cancelled;

    /// <summary>From any thread; a timer already running is not stopped.</summary>
    public void Cancel() => _cancelled = true;
}
