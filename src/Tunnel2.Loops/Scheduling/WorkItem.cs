namespace Tunnel2.Loops.Scheduling;

/// <summary>A callback and its state, posted onto a loop: a struct, so that posting a cached delegate allocates nothing.</summary>
internal readonly record struct WorkItem(Action<object?> Callback, object? State)
{
    public void Run() => Callback(State);
}
