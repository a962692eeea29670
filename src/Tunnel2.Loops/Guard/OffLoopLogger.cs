using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A logger for code that may run on an event loop's thread as well as off it (the uplink's frame dispatch): a call
/// on a loop thread is written on the thread pool instead (<see cref="LoggedLine"/>: what it says and its context taken
/// at the call, the rare line's cost), every other call goes straight through. Lines from one loop keep their order
/// only roughly, and a deferred line's timestamp is when it was written; each still carries what it says.
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

        LoggedLine.Defer(inner, logLevel, eventId, state, exception, formatter);
    }
}
