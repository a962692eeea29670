using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A logger that fails any log call made on an event loop's thread and passes every other one to the logger it wraps:
/// for the loggers of code that runs beside a loop (its log lines must be written off the loop), in production as in
/// tests, whatever providers the host has (a host on Serilog ignores extra providers such as
/// <see cref="LoopGuardLoggerProvider"/>). The check is one thread-static read per call.
/// </summary>
public sealed class LoopGuardLogger(ILogger inner) : ILogger
{
    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => inner.BeginScope(state);

    /// <summary>Checked here too: generated log methods ask first, so a log call site reached on the loop trips at once.</summary>
    public bool IsEnabled(LogLevel logLevel)
    {
        LoopGuard.AssertNotOnLoop("Logging");
        return inner.IsEnabled(logLevel);
    }

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        LoopGuard.AssertNotOnLoop("Logging");
        inner.Log(logLevel, eventId, state, exception, formatter);
    }
}
