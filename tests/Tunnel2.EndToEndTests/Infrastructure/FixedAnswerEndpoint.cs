using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A stand-in tunnel endpoint (real Kestrel on 127.0.0.1, port 0) that answers every upgrade attempt with one fixed
/// status, as an overloaded server (503), a rate limiter (429) or an access policy (403) in front of the server would.
/// </summary>
public sealed class FixedAnswerEndpoint : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly StrongBox<int> _requests;

    private FixedAnswerEndpoint(WebApplication app, StrongBox<int> requests)
    {
        _app = app;
        _requests = requests;
        Url = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
    }

    public Uri Url { get; }

    /// <summary>Upgrade attempts answered so far.</summary>
    public int Requests => Volatile.Read(ref _requests.Value);

    public static async Task<FixedAnswerEndpoint> StartAsync(int status)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        WebApplication app = builder.Build();
        var requests = new StrongBox<int>();
        app.Run(context =>
        {
            Interlocked.Increment(ref requests.Value);
            context.Response.StatusCode = status;
            context.Response.Headers.RetryAfter = "1";
            context.Response.ContentType = "application/problem+json";
            return context.Response.WriteAsync($"{{\"status\":{status},\"title\":\"refused by the test endpoint\"}}");
        });
        await app.StartAsync();
        return new FixedAnswerEndpoint(app, requests);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
