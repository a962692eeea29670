using System.Collections.Concurrent;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>Idle keep-alive connections to the one backend, reused most recent first.</summary>
internal sealed class BackendConnectionPool(Uri backend, TimeSpan connectTimeout) : IAsyncDisposable
{
    private readonly ConcurrentStack<BackendConnection> _idle = new();

    public Uri Backend { get; } = backend;

    /// <summary>An idle connection that still looks alive, else a new one.</summary>
    public async ValueTask<(BackendConnection Connection, bool Reused)> RentAsync(CancellationToken cancellationToken)
    {
        while (_idle.TryPop(out BackendConnection? idle))
        {
            if (idle.LooksReusable())
            {
                return (idle, true);
            }

            await idle.DisposeAsync();
        }

        return (await BackendConnection.ConnectAsync(Backend, connectTimeout, cancellationToken), false);
    }

    public void Return(BackendConnection connection) => _idle.Push(connection);

    public async ValueTask DisposeAsync()
    {
        while (_idle.TryPop(out BackendConnection? idle))
        {
            await idle.DisposeAsync();
        }
    }
}
