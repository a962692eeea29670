using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A logger for code that may run on an event loop's thread as well as off it (the uplink's frame dispatch): a call
/// on a loop thread is written on the thread pool instead (its state captured, the rare line's cost), every other call
/// goes straight through. Lines from one loop keep their order only roughly; each still carries what it says.
/// </summary>
public sealed class OffLoopLogger(ILogger inner) : ILogger
{
    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => EventLoop.IsLoopThread ? null : inner.BeginScope(state);

    /// <summary>On the loop, answers yes without asking the inner logger (whose providers might block); the pool decides.</summary>
    public bool IsEnabled(LogLevel logLevel) => EventLoop.IsLoopThread || inner.IsEnabled(logLevel);

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        if (!EventLoop.IsLoopThread)
        {
            inner.Log(logLevel, eventId, state, exception, formatter);
            return;
        }

        ThreadPool.UnsafeQueueUserWorkItem(
            static line => line.Write(),
            new Line<TState>(inner, logLevel, eventId, state, exception, formatter),
            preferLocal: false);
    }

    private sealed record Line<TState>(ILogger Inner, LogLevel Level, EventId EventId, TState State, Exception? Exception, Func<TState, Exception?, string> Formatter)
    {
        public void Write()
        {
            if (Inner.IsEnabled(Level))
            {
                Inner.Log(Level, EventId, State, Exception, Formatter);
            }
        }
    }
}
