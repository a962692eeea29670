using System.Collections.Concurrent;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A backend that keeps every request it receives (method, target, headers, body) and answers each with a small JSON
/// document and a cookie: what the inspector tests check a replay against.
/// </summary>
public sealed class RecordingBackend : IAsyncDisposable
{
    private readonly LoopbackApp _app;

    private RecordingBackend(LoopbackApp app, ConcurrentQueue<ReceivedRequest> received)
    {
        _app = app;
        Received = received;
    }

    public Uri Url => _app.Url;

    public ConcurrentQueue<ReceivedRequest> Received { get; }

    public static async Task<RecordingBackend> StartAsync()
    {
        var received = new ConcurrentQueue<ReceivedRequest>();
        LoopbackApp app = await LoopbackApp.StartAsync(web => web.Run(async context =>
        {
            using var reader = new StreamReader(context.Request.Body);
            string body = await reader.ReadToEndAsync();
            var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            foreach (KeyValuePair<string, Microsoft.Extensions.Primitives.StringValues> header in context.Request.Headers)
            {
                headers[header.Key] = header.Value.ToString();
            }

            string target = context.Request.Path + context.Request.QueryString;
            received.Enqueue(new ReceivedRequest(context.Request.Method, target, headers, body));
            context.Response.Headers.SetCookie = "sid=backend-secret; Path=/";
            await context.Response.WriteAsJsonAsync(new Answer(received.Count, context.Request.Method, target));
        }));
        return new RecordingBackend(app, received);
    }

    public ValueTask DisposeAsync() => _app.DisposeAsync();

    public sealed record ReceivedRequest(string Method, string Target, Dictionary<string, string> Headers, string Body);

    private sealed record Answer(int Count, string Method, string Target);
}
