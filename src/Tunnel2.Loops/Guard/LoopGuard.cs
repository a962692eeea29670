namespace Tunnel2.Loops.Guard;

/// <summary>
/// Issue 52 item 5: a blocking call never runs on a loop thread. Every entry point that may block calls
/// <see cref="AssertNotOnLoop"/> first (the wrappers in <see cref="GuardedCalls"/> and <see cref="LoopGuardLoggerProvider"/>
/// do), so that such a call made from a loop callback fails at once, in tests and in production alike, instead of
/// stalling the loop now and then under load. The check is one thread-static read.
/// </summary>
public static class LoopGuard
{
    /// <exception cref="BlockingCallOnLoopException">when called on an event loop's thread.</exception>
    public static void AssertNotOnLoop(string operation)
    {
        if (EventLoop.IsLoopThread)
        {
            Throw(operation);
        }
    }

    /// <summary>Runs <paramref name="blocking"/> on the thread pool and posts its result back to <paramref name="loop"/>:
    /// the hand-off a loop callback makes instead of calling something that blocks.</summary>
    public static void OffLoop<T>(EventLoop loop, Func<Task<T>> blocking, Action<Task<T>> onLoop)
    {
        ThreadPool.UnsafeQueueUserWorkItem(
            static async state =>
            {
                Task<T> task;
                try
                {
                    T value = await state.Blocking().ConfigureAwait(false);
                    task = Task.FromResult(value);
                }
                catch (Exception fault)
                {
                    task = Task.FromException<T>(fault);
                }
                state.Loop.Post(static item => { var (done, result) = ((Action<Task<T>>, Task<T>))item!; done(result); }, (state.OnLoop, task));
            },
            (Loop: loop, Blocking: blocking, OnLoop: onLoop),
            preferLocal: false);
    }

    private static void Throw(string operation) =>
        throw new BlockingCallOnLoopException(
            $"{operation} was called on event loop thread '{Thread.CurrentThread.Name}'; it may block every connection of that loop. "
            + "Run it on the thread pool (LoopGuard.OffLoop) and post the result back.");
}
