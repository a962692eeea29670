using System.Collections.Concurrent;
using System.Runtime.CompilerServices;

namespace Tunnel2.Protocol.Scheduling;

/// <summary>
/// A lane for bulk body copies behind everything else the thread pool has queued. The pool keeps one first-in
/// first-out queue: when a crowd of uploads starts, every chunk of every body goes into it, and a new exchange's steps
/// (Kestrel's accept and first read, an answer handed to its caller) wait behind all of them. A copy that awaits
/// <see cref="Yield"/> is queued here instead, and the lane takes its turn in the pool's queue as one work item that runs
/// at most <see cref="BatchSize"/> copies, then queues itself again at the back: bulk gets a few copies per pass
/// through the queue, and whatever was queued meanwhile goes first. An idle pool runs the lane back to back.
/// </summary>
public sealed class BulkLane : IThreadPoolWorkItem
{
    /// <summary>Copies run per turn of the lane in the pool's queue.</summary>
    public const int BatchSize = 8;

    private readonly ConcurrentQueue<Action> _waiting = new();
    private int _queued;

    /// <summary>The process's lane (the pool it yields to is the process's too).</summary>
    public static BulkLane Shared { get; } = new();

    /// <summary>Copies waiting for their turn (tests, diagnostics).</summary>
    public int Waiting => _waiting.Count;

    /// <summary>Resumes the awaiting copy on the lane, behind what the thread pool has queued.</summary>
    public YieldAwaitable Yield() => new(this);

    void IThreadPoolWorkItem.Execute()
    {
        for (int i = 0; i < BatchSize && _waiting.TryDequeue(out Action? copy); i++)
        {
            copy(); // an async method's step: its own exceptions end up in its task, not here
        }

        Volatile.Write(ref _queued, 0);
        if (!_waiting.IsEmpty)
        {
            QueueTurn();
        }
    }

    private void Enqueue(Action continuation)
    {
        _waiting.Enqueue(continuation);
        QueueTurn();
    }

    private void QueueTurn()
    {
        if (Interlocked.Exchange(ref _queued, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    /// <summary>What <c>await lane.Yield()</c> awaits: never complete at once, resumed by the lane.</summary>
    public readonly struct YieldAwaitable(BulkLane lane) : ICriticalNotifyCompletion
    {
        public bool IsCompleted => false;

        public YieldAwaitable GetAwaiter() => this;

        public void GetResult()
        {
        }

        public void OnCompleted(Action continuation) => lane.Enqueue(continuation);

        public void UnsafeOnCompleted(Action continuation) => lane.Enqueue(continuation);
    }
}
