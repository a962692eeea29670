using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A logger provider that writes nothing and fails any log call made on an event loop's thread: the processes' sinks
/// (console, files) block on I/O, so a loop hands what it has to say to another thread. Added beside the real providers
/// in tests (and in a process that wants the check in production), it turns a stray log call into a failure.
/// </summary>
public sealed class LoopGuardLoggerProvider : ILoggerProvider
{
    private static readonly GuardLogger Logger = new();

    public ILogger CreateLogger(string categoryName) => Logger;

    public void Dispose()
    {
    }

    private sealed class GuardLogger : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        /// <summary>Checked here too: a guarded level test on the loop is already a sign the call is about to be made there.</summary>
        public bool IsEnabled(LogLevel logLevel)
        {
            LoopGuard.AssertNotOnLoop("Logging");
            return true;
        }

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            LoopGuard.AssertNotOnLoop("Logging");
    }
}
