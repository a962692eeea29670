using Microsoft.Extensions.Logging;

namespace Tunnel2.Loops.Guard;

/// <summary>
/// A line logged on an event loop's thread, written on the thread pool. What it says is taken when it is logged: a
/// state that reads live objects when written would by then describe something else (ASP.NET Core's "Request
/// starting" and "Request finished" read the request's HttpContext, which Kestrel has reset or reused for the
/// connection's next request: Serilog dropped the line, another provider would write the next request's path). It is
/// written in the logging call's execution context, so it carries that call's scopes (request and connection ids) and
/// activity (trace and span ids), as a line written where it was logged does.
/// </summary>
internal static class LoggedLine
{
    /// <summary>Queues the line; the pool asks the logger whether its level is on before writing it.</summary>
    public static void Defer<TState>(ILogger logger, LogLevel level, EventId eventId, TState state, Exception? exception,
        Func<TState, Exception?, string> formatter)
    {
        if (LoggedState.KeepsItsValues(state))
        {
            Queue(new Line<TState>(logger, level, eventId, state, exception, formatter));
        }
        else if (state is IEnumerable<KeyValuePair<string, object?>> properties)
        {
            Queue(new Line<LoggedState>(logger, level, eventId, new LoggedState(properties, formatter(state, exception)), exception, LoggedState.Format));
        }
        else
        {
            Queue(new Line<string>(logger, level, eventId, formatter(state, exception), exception, static (message, _) => message));
        }
    }

    // QueueUserWorkItem, not its Unsafe form: the line is written in the execution context of the call that logged it.
    private static void Queue<TState>(Line<TState> line) => ThreadPool.QueueUserWorkItem(static line => line.Write(), line, preferLocal: false);

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
