using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// One replica of an app behind a session (real Kestrel on 127.0.0.1, port 0): every request is answered with the
/// replica's name (body and <c>X-Replica</c>) after <see cref="Delay"/>; <c>/health</c> answers 200 or 503 as
/// <see cref="Healthy"/> says. Tests tell from the answers which client a request went to.
/// </summary>
public sealed class ReplicaBackend : IAsyncDisposable
{
    public const string HealthPath = "/health";

    private LoopbackApp? _app;
    private int _requests;
    private volatile bool _healthy = true;

    private ReplicaBackend(string name, TimeSpan delay)
    {
        Name = name;
        Delay = delay;
    }

    public string Name { get; }

    public TimeSpan Delay { get; }

    public Uri Url => _app!.Url;

    /// <summary>Requests answered, health probes not counted.</summary>
    public int Requests => Volatile.Read(ref _requests);

    public bool Healthy
    {
        get => _healthy;
        set => _healthy = value;
    }

    public static async Task<ReplicaBackend> StartAsync(string name, TimeSpan delay = default)
    {
        var replica = new ReplicaBackend(name, delay);
        replica._app = await LoopbackApp.StartAsync(app => app.Run(async context =>
        {
            if (context.Request.Path == HealthPath)
            {
                context.Response.StatusCode = replica.Healthy ? StatusCodes.Status200OK : StatusCodes.Status503ServiceUnavailable;
                return;
            }

            Interlocked.Increment(ref replica._requests);
            if (replica.Delay > TimeSpan.Zero)
            {
                await Task.Delay(replica.Delay, context.RequestAborted);
            }

            context.Response.Headers["X-Replica"] = replica.Name;
            await context.Response.WriteAsync(replica.Name);
        }));
        return replica;
    }

    /// <summary>A loopback URL on which nothing listens: a backend that is down.</summary>
    public static Uri Unreachable()
    {
        using var probe = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        probe.Start();
        int port = ((System.Net.IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        return new Uri($"http://127.0.0.1:{port}");
    }

    public ValueTask DisposeAsync() => _app?.DisposeAsync() ?? ValueTask.CompletedTask;
}
