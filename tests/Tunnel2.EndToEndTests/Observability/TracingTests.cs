using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Observability;

/// <summary>W3C trace context through the tunnel: spans on both sides in the caller's trace, and OTLP export when configured.</summary>
public sealed class TracingTests
{
    [Fact]
    public async Task A_callers_trace_runs_through_a_server_span_and_a_client_span_to_the_backend()
    {
        var stopped = new ConcurrentBag<Activity>();
        using var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name is "Tunnel2.ProxyEntry" or "Tunnel2.TunnelClient",
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = stopped.Add,
        };
        ActivitySource.AddActivityListener(listener);

        await using TunnelStack stack = await TunnelStack.StartAsync();
        string session = "trace-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        ActivityTraceId traceId = ActivityTraceId.CreateRandom();
        ActivitySpanId callerSpan = ActivitySpanId.CreateRandom();
        using var http = CallerHttp.Create();
        using var request = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, "/loadtest/get"));
        request.Headers.TryAddWithoutValidation("traceparent", $"00-{traceId}-{callerSpan}-01");
        using HttpResponseMessage response = await http.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using JsonDocument described = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        string backendSaw = HeaderOf(described.RootElement.GetProperty("headers"), "traceparent");

        await Eventually.WaitUntilAsync(() => stopped.Count(a => a.TraceId == traceId) >= 2, "both spans of the trace have ended");
        Activity forward = Assert.Single(stopped, a => a.TraceId == traceId && a.OperationName == "tunnel2.forward");
        Activity relay = Assert.Single(stopped, a => a.TraceId == traceId && a.OperationName == "tunnel2.relay");

        Assert.Equal(session, forward.GetTagItem("tunnel2.session"));
        Assert.Equal(200, forward.GetTagItem("http.response.status_code"));
        Assert.Equal(relay.ParentSpanId, forward.SpanId); // the client's span is the server's child
        Assert.NotEqual(callerSpan, relay.ParentSpanId);
        Assert.Equal($"00-{traceId}-{relay.SpanId}-01", backendSaw); // and the backend's parent is the client's span
        Assert.Equal(ActivityKind.Client, forward.Kind);
        Assert.Equal(ActivityKind.Server, relay.Kind);
    }

    [Fact]
    public async Task With_the_standard_otlp_endpoint_set_the_server_and_the_client_export_their_spans()
    {
        await using OtlpReceiver receiver = await OtlpReceiver.StartAsync();
        string[] otlp = [$"--OTEL_EXPORTER_OTLP_ENDPOINT={receiver.Url}", "--OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"];
        await using TunnelStack stack = await TunnelStack.StartAsync(otlp);
        string session = "otlp-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session, extraArgs: otlp);
        using var http = CallerHttp.Create();
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"))).StatusCode);

        // The SDK batches spans and sends them every few seconds, as protobuf to {endpoint}/v1/traces.
        await Eventually.WaitUntilAsync(() => receiver.Contains("TunnelServer") && receiver.Contains("TunnelClient"),
            "both processes exported spans naming their service", TimeSpan.FromSeconds(30));
        Assert.True(receiver.Contains("tunnel2.forward"));
        Assert.True(receiver.Contains("tunnel2.relay"));
    }

    private static string HeaderOf(JsonElement headers, string name)
    {
        foreach (JsonProperty header in headers.EnumerateObject())
        {
            if (string.Equals(header.Name, name, StringComparison.OrdinalIgnoreCase))
            {
                return header.Value.GetString()!;
            }
        }

        throw new InvalidOperationException($"the backend saw no {name}");
    }

    /// <summary>An OTLP/HTTP endpoint (real Kestrel on 127.0.0.1) that keeps the bodies posted to <c>/v1/traces</c>.</summary>
    private sealed class OtlpReceiver : IAsyncDisposable
    {
        private readonly ConcurrentQueue<byte[]> _bodies = new();
        private LoopbackApp? _app;

        public Uri Url => _app!.Url;

        public static async Task<OtlpReceiver> StartAsync()
        {
            var receiver = new OtlpReceiver();
            receiver._app = await LoopbackApp.StartAsync(app => app.MapPost("/v1/traces", async (HttpContext context) =>
            {
                using var body = new MemoryStream();
                await context.Request.Body.CopyToAsync(body);
                receiver._bodies.Enqueue(body.ToArray());
                return Results.Ok();
            }));
            return receiver;
        }

        /// <summary>Whether some exported batch holds this text (protobuf carries strings as UTF-8 bytes).</summary>
        public bool Contains(string text)
        {
            byte[] needle = System.Text.Encoding.UTF8.GetBytes(text);
            foreach (byte[] body in _bodies)
            {
                if (body.AsSpan().IndexOf(needle) >= 0)
                {
                    return true;
                }
            }

            return false;
        }

        public ValueTask DisposeAsync() => _app?.DisposeAsync() ?? ValueTask.CompletedTask;
    }
}
