using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A process's logger factory when application code runs on an event loop (the server's public HTTP on its loop): a line
/// logged on a loop's thread is written on the thread pool (the sinks block on I/O; <see cref="LoggedLine"/> keeps what
/// it says and its scopes and activity), every other line straight through. Unlike <see cref="OffLoopLogger"/>, the
/// level test and the scopes go to the inner logger on the loop too: the host's loggers decide the level from their
/// filters and keep a scope in an async-local, without I/O, and a disabled Debug call site on the hot path must stay
/// free. Kestrel and ASP.NET Core's hosting open a scope per connection and per request whose ids (ConnectionId,
/// RequestId, RequestPath) the lines logged within them carry, on the loop as with the socket transport.
/// </summary>
public sealed class OffLoopLoggerFactory(ILoggerFactory inner) : ILoggerFactory
{
    public ILogger CreateLogger(string categoryName) => new DeferringLogger(inner.CreateLogger(categoryName));

    public void AddProvider(ILoggerProvider provider) => inner.AddProvider(provider);

    public void Dispose() => inner.Dispose();

    private sealed class DeferringLogger(ILogger logger) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => logger.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => logger.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!EventLoop.IsLoopThread)
            {
                logger.Log(logLevel, eventId, state, exception, formatter);
            }
            else if (logger.IsEnabled(logLevel))
            {
                LoggedLine.Defer(logger, logLevel, eventId, state, exception, formatter);
            }
        }
    }
}
