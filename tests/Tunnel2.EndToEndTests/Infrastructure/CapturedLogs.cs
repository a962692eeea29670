using System.Collections.Concurrent;
using Serilog;
using Serilog.Configuration;
using Serilog.Core;
using Serilog.Events;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A Serilog sink the in-process servers write to (named in their <c>Serilog:WriteTo</c> configuration, as an operator
/// would add a sink), so tests can check that a log line was emitted. It keeps the most recent events only.
/// </summary>
public static class CapturedLogs
{
    private const int Capacity = 10_000;
    private static readonly ConcurrentQueue<LogEvent> Events = new();

    /// <summary>Command-line settings that add this sink to a host reading <c>Serilog</c> from configuration.</summary>
    public static readonly string[] ServerArgs =
    [
        $"--Serilog:Using:9={typeof(CapturedLogs).Assembly.GetName().Name}",
        $"--Serilog:WriteTo:9:Name={nameof(Captured)}",
    ];

    /// <summary>The rendered messages of captured events whose <paramref name="property"/> starts with <paramref name="prefix"/>.</summary>
    public static List<string> MessagesWhere(string property, string prefix) =>
        EventsWhere(property, prefix).ConvertAll(logEvent => logEvent.RenderMessage(System.Globalization.CultureInfo.InvariantCulture));

    /// <summary>
    /// The captured events, oldest first, whose <paramref name="property"/> starts with <paramref name="prefix"/>: their
    /// timestamps are the process's own, taken as it logged, for timing claims a test's clock would blur.
    /// </summary>
    public static List<LogEvent> EventsWhere(string property, string prefix)
    {
        var found = new List<LogEvent>();
        foreach (LogEvent logEvent in Events)
        {
            if (Text(logEvent, property) is { } text && text.StartsWith(prefix, StringComparison.Ordinal))
            {
                found.Add(logEvent);
            }
        }

        return found;
    }

    /// <summary>A property's value as logged (a string, or a number's invariant text); null when the event has none.</summary>
    public static string? Text(LogEvent logEvent, string property) =>
        logEvent.Properties.TryGetValue(property, out LogEventPropertyValue? value) && value is ScalarValue { Value: { } scalar }
            ? Convert.ToString(scalar, System.Globalization.CultureInfo.InvariantCulture)
            : null;

    /// <summary>Every captured event rendered, with its properties (to check what is never written).</summary>
    public static List<string> Everything()
    {
        var rendered = new List<string>();
        foreach (LogEvent logEvent in Events)
        {
            rendered.Add(logEvent.RenderMessage(System.Globalization.CultureInfo.InvariantCulture) + " " + string.Join(' ', logEvent.Properties.Values)
                         + " " + logEvent.Exception);
        }

        return rendered;
    }

    /// <summary>The configuration method Serilog.Settings.Configuration finds by its name.</summary>
    public static LoggerConfiguration Captured(this LoggerSinkConfiguration sinks) => sinks.Sink(new Sink());

    private sealed class Sink : ILogEventSink
    {
        public void Emit(LogEvent logEvent)
        {
            Events.Enqueue(logEvent);
            while (Events.Count > Capacity && Events.TryDequeue(out _))
            {
                // Oldest first.
            }
        }
    }
}
