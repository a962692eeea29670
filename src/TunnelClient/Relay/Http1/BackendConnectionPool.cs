using System.Collections.Concurrent;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>Idle keep-alive connections to the one backend, reused most recent first.</summary>
/// <param name="onClosed">Told of every connection closed instead of reused, why, and on which stream (log line and counter).</param>
/// <param name="unsentBytesLimit">TCP_NOTSENT_LOWAT of each new connection (0 = the system's default).</param>
internal sealed class BackendConnectionPool(Uri backend, TimeSpan connectTimeout, int unsentBytesLimit, Action<CloseCause, uint> onClosed) : IAsyncDisposable
{
    private readonly ConcurrentStack<BackendConnection> _idle = new();

    public Uri Backend { get; } = backend;

    /// <summary>An idle connection that is still quiet (its response read already started), else a new one.</summary>
    public async ValueTask<(BackendConnection Connection, bool Reused)> RentAsync(uint streamId, CancellationToken cancellationToken)
    {
        while (_idle.TryPop(out BackendConnection? idle))
        {
            if (idle.BeginReadAhead() is not { } cause)
            {
                return (idle, true);
            }

            await CloseAsync(idle, cause, streamId);
        }

        return (await BackendConnection.ConnectAsync(Backend, connectTimeout, unsentBytesLimit, cancellationToken), false);
    }

    /// <summary>
    /// The one place that decides whether a connection goes back to the pool once its exchange is over: only when the
    /// response ended exactly where its framing says, the whole request went out, and nothing was read past the end.
    /// </summary>
    /// <param name="cause">Why it cannot be reused, as far as the caller knows; null when the exchange itself was clean.</param>
    public ValueTask ReturnOrCloseAsync(BackendConnection connection, CloseCause? cause, uint streamId)
    {
        if ((cause ?? connection.CheckNothingBuffered()) is { } reason)
        {
            return CloseAsync(connection, reason, streamId);
        }

        _idle.Push(connection);
        return ValueTask.CompletedTask;
    }

    public async ValueTask DisposeAsync()
    {
        while (_idle.TryPop(out BackendConnection? idle))
        {
            await idle.DisposeAsync();
        }
    }

    private ValueTask CloseAsync(BackendConnection connection, CloseCause cause, uint streamId)
    {
        onClosed(cause, streamId);
        return connection.DisposeAsync();
    }
}
