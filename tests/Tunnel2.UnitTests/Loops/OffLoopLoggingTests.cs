using System.Collections;
using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Serilog.Core;
using Serilog.Events;
using Serilog.Extensions.Logging;
using Tunnel2.Loops.Guard;

namespace Tunnel2.UnitTests.Loops;

/// <summary>
/// A line logged on a loop and written on the thread pool (<see cref="OffLoopLoggerFactory"/>, the server's and the
/// client's logging when they run application code on a loop) says what it said at the call, and carries the call's
/// scopes and activity, as a line written where it was logged does.
/// </summary>
public sealed class OffLoopLoggingTests
{
    private static readonly Action<ILogger, string, Exception?> Finished =
        LoggerMessage.Define<string>(LogLevel.Information, new EventId(2), "Request finished {Path}");

    [Fact]
    public async Task A_line_whose_state_reads_a_live_object_says_what_the_object_held_when_it_was_logged()
    {
        using var harness = new LoopHarness();
        using var mutated = new ManualResetEventSlim();
        var inner = new LateReadingLogger(mutated);
        using var factory = new OffLoopLoggerFactory(new SingleLoggerFactory(inner));
        ILogger logger = factory.CreateLogger("hosting");
        var request = new LiveRequest { Path = "/first" };

        await harness.OnLoopAsync(() =>
        {
            // As hosting's "Request finished": a state over the request, which the server then resets for the next one.
            logger.Log(LogLevel.Information, new EventId(2), new LiveState(request), null, static (state, _) => state.ToString());
            request.Path = "/second";
            mutated.Set();
        });

        (string Path, string Message) written = await inner.Written.Task.WaitAsync(LoopHarness.Timeout);
        Assert.Equal("/first", written.Path);
        Assert.Equal("Request finished /first", written.Message);
    }

    [Fact]
    public async Task A_line_logged_on_the_loop_carries_the_scope_and_the_activity_it_was_logged_in()
    {
        using var harness = new LoopHarness();
        var sink = new CollectingSink();
        using Logger serilog = new Serilog.LoggerConfiguration().Enrich.FromLogContext().WriteTo.Sink(sink).CreateLogger();
        using var factory = new OffLoopLoggerFactory(new SerilogLoggerFactory(serilog));
        ILogger logger = factory.CreateLogger("hosting");
        using var source = new ActivitySource("off-loop-test");
        using var listener = new ActivityListener
        {
            ShouldListenTo = candidate => candidate == source,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllData,
        };
        ActivitySource.AddActivityListener(listener);

        ActivityTraceId traceId = await harness.OnLoopAsync(() =>
        {
            using Activity activity = source.StartActivity("request")!;
            using (logger.BeginScope(new Dictionary<string, object> { ["RequestId"] = "r-1" }))
            {
                Finished(logger, "/first", null);
            }

            return activity.TraceId;
        });

        LogEvent written = await sink.First.Task.WaitAsync(LoopHarness.Timeout);
        Assert.Equal("\"r-1\"", written.Properties["RequestId"].ToString());
        Assert.Equal(traceId, written.TraceId);
    }

    private sealed class LiveRequest
    {
        public string Path { get; set; } = "";
    }

    /// <summary>Reads the request when enumerated or rendered, as ASP.NET Core hosting's log states do.</summary>
    private sealed class LiveState(LiveRequest request) : IReadOnlyList<KeyValuePair<string, object?>>
    {
        public int Count => 2;

        public KeyValuePair<string, object?> this[int index] => index == 0
            ? new("Path", request.Path)
            : new("{OriginalFormat}", "Request finished {Path}");

        public IEnumerator<KeyValuePair<string, object?>> GetEnumerator()
        {
            yield return this[0];
            yield return this[1];
        }

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        public override string ToString() => $"Request finished {request.Path}";
    }

    /// <summary>Reads the state it is given only once the test has changed the live object (a sink that writes later).</summary>
    private sealed class LateReadingLogger(ManualResetEventSlim mutated) : ILogger
    {
        public TaskCompletionSource<(string Path, string Message)> Written { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            Assert.True(mutated.Wait(LoopHarness.Timeout));
            string path = state is IEnumerable<KeyValuePair<string, object?>> properties
                ? properties.First(property => property.Key == "Path").Value as string ?? ""
                : "";
            Written.TrySetResult((path, formatter(state, exception)));
        }
    }

    private sealed class SingleLoggerFactory(ILogger logger) : ILoggerFactory
    {
        public ILogger CreateLogger(string categoryName) => logger;

        public void AddProvider(ILoggerProvider provider)
        {
        }

        public void Dispose()
        {
        }
    }

    private sealed class CollectingSink : ILogEventSink
    {
        public TaskCompletionSource<LogEvent> First { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Emit(LogEvent logEvent) => First.TrySetResult(logEvent);
    }
}
