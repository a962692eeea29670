using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A process's logger factory when application code runs on an event loop (the server's public HTTP on its loop): a line
/// logged on a loop's thread is written on the thread pool (the sinks block on I/O), every other line straight through.
/// Unlike <see cref="OffLoopLogger"/>, the level test asks the inner logger on the loop too: the host's loggers decide
/// it from their filters without I/O, and a disabled Debug call site on the hot path must stay free.
/// </summary>
public sealed class OffLoopLoggerFactory(ILoggerFactory inner) : ILoggerFactory
{
    public ILogger CreateLogger(string categoryName) => new DeferringLogger(inner.CreateLogger(categoryName));

    public void AddProvider(ILoggerProvider provider) => inner.AddProvider(provider);

    public void Dispose() => inner.Dispose();

    private sealed class DeferringLogger(ILogger logger) : ILogger
    {
        private readonly OffLoopLogger _offLoop = new(logger);

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => _offLoop.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => logger.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            _offLoop.Log(logLevel, eventId, state, exception, formatter);
    }
}
