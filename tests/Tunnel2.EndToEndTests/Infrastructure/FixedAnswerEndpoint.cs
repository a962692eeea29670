using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A stand-in tunnel endpoint (real Kestrel on 127.0.0.1, port 0) that answers every upgrade attempt with one fixed
/// status, as an overloaded server (503), a rate limiter (429) or an access policy (403) in front of the server would.
/// </summary>
public sealed class FixedAnswerEndpoint : IAsyncDisposable
{
    private readonly LoopbackApp _app;
    private readonly StrongBox<int> _requests;

    private FixedAnswerEndpoint(LoopbackApp app, StrongBox<int> requests)
    {
        _app = app;
        _requests = requests;
    }

    public Uri Url => _app.Url;

    /// <summary>Upgrade attempts answered so far.</summary>
    public int Requests => Volatile.Read(ref _requests.Value);

    public static async Task<FixedAnswerEndpoint> StartAsync(int status)
    {
        var requests = new StrongBox<int>();
        LoopbackApp app = await LoopbackApp.StartAsync(app => app.Run(context =>
        {
            Interlocked.Increment(ref requests.Value);
            context.Response.StatusCode = status;
            context.Response.Headers.RetryAfter = "1";
            context.Response.ContentType = "application/problem+json";
            return context.Response.WriteAsync($"{{\"status\":{status},\"title\":\"refused by the test endpoint\"}}");
        }));
        return new FixedAnswerEndpoint(app, requests);
    }

    public ValueTask DisposeAsync() => _app.DisposeAsync();
}
