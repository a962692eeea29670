using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>
/// A logger provider for the loop harnesses: keeps the lines at or above <paramref name="linesFrom"/>, and the errors
/// (with their exceptions) apart, so a harness can fail a test that logged one.
/// </summary>
internal sealed class LogRecorder(LogLevel linesFrom = LogLevel.Trace) : ILoggerProvider, ILogger
{
    private readonly ConcurrentQueue<string> _lines = new();

    public ConcurrentQueue<string> Errors { get; } = new();

    public IReadOnlyCollection<string> Lines => _lines;

    public ILogger CreateLogger(string categoryName) => this;

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        string line = $"{logLevel}: {formatter(state, exception)}";
        if (logLevel >= linesFrom)
        {
            _lines.Enqueue(line);
        }

        if (logLevel >= LogLevel.Error)
        {
            Errors.Enqueue($"{line} {exception}");
        }
    }

    public void Dispose()
    {
    }
}
