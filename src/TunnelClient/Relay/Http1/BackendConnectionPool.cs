using System.Diagnostics.CodeAnalysis;
using Tunnel2.Loops;
using Tunnel2.TunnelClient.Relay.OnLoop;

namespace Tunnel2.TunnelClient.Relay.Http1;

/// <summary>
/// Idle keep-alive connections to the one backend, reused most recent first. A connection idle for longer than
/// <c>idleTimeout</c> is closed (as <c>SocketsHttpHandler</c>'s <c>PooledConnectionIdleTimeout</c> and nginx's upstream
/// <c>keepalive_timeout</c>), so a burst does not leave its connections open on the backend for good. At most
/// <c>maxIdle</c> connections wait here (nginx's upstream <c>keepalive</c> count): more may be in use at once, since a
/// request gives its concurrency slot back once its response head is out, and those beyond the cap are closed when
/// their exchanges end.
/// </summary>
internal sealed class BackendConnectionPool : IAsyncDisposable
{
    private readonly Lock _lock = new();

    // Oldest first: rents and returns work at the end (most recent first), the sweep trims the front.
    private readonly List<IdleConnection> _idle = [];
    private readonly Uri _backend;
    private readonly TimeSpan _connectTimeout;
    private readonly int _unsentBytesLimit;
    private readonly Action<CloseCause, uint> _onClosed;
    private readonly TimeProvider _time;
    private readonly long _idleTimeoutTicks;
    private LoopBackendDialer? _loopDialer;
    private readonly int _maxIdle;
    private readonly ITimer _sweep;
    private bool _disposed;

    /// <param name="maxIdle">The most idle connections kept (the client's concurrency limit).</param>
    /// <param name="onClosed">Told of every connection closed instead of reused, why, and on which stream (log line and counter).</param>
    /// <param name="unsentBytesLimit">TCP_NOTSENT_LOWAT of each new connection (0 = the system's default).</param>
    public BackendConnectionPool(
        Uri backend, TimeSpan connectTimeout, TimeSpan idleTimeout, int maxIdle, int unsentBytesLimit, Action<CloseCause, uint> onClosed, TimeProvider? time = null)
    {
        _backend = backend;
        _maxIdle = maxIdle;
        _connectTimeout = connectTimeout;
        _unsentBytesLimit = unsentBytesLimit;
        _onClosed = onClosed;
        _time = time ?? TimeProvider.System;
        _idleTimeoutTicks = (long)(idleTimeout.TotalSeconds * _time.TimestampFrequency);

        // A connection is closed between one and one and a quarter idle timeouts after its last use.
        TimeSpan period = idleTimeout / 4;
        _sweep = _time.CreateTimer(static state => ((BackendConnectionPool)state!).CloseExpired(), this, period, period);
    }

    /// <summary>Connections idle in the pool right now.</summary>
    public int IdleCount
    {
        get
        {
            lock (_lock)
            {
                return _idle.Count;
            }
        }
    }

    /// <summary>
    /// An idle connection that is still quiet, its response read already started; false when none is left. Idle
    /// connections the backend closed or wrote to meanwhile are closed on the way.
    /// </summary>
    public bool TryRentIdle(uint streamId, [NotNullWhen(true)] out BackendConnection? connection)
    {
        while (TryPop(out connection))
        {
            if (connection.BeginReadAhead() is not { } cause)
            {
                return true;
            }

            _ = CloseQuietlyAsync(connection, cause, streamId);
        }

        return false;
    }

    /// <summary>A new connection to the backend, within the connect timeout.</summary>
    /// <param name="isCrowded">Whether its reads should wait for data before they take a buffer (see <see cref="CrowdAwareReadStream"/>).</param>
    /// <param name="mayUseLoop">False for an upgrade request, whose connection the upgrade relays may take over as a socket.</param>
#pragma warning disable CA2000 // the new connection is the caller's
    public Task<BackendConnection> ConnectAsync(Func<bool> isCrowded, bool mayUseLoop, CancellationToken cancellationToken) =>
        mayUseLoop && _loopDialer is { } dialer
            ? BackendConnection.ConnectOnLoopAsync(dialer, _connectTimeout, _unsentBytesLimit, isCrowded, cancellationToken)
            : BackendConnection.ConnectAsync(_backend, _connectTimeout, _unsentBytesLimit, isCrowded, cancellationToken);
#pragma warning restore CA2000

    /// <summary>New connections are made on the client's event loop (<c>TunnelClient:Backends:Relay</c> = <c>Loop</c>; plain HTTP only).</summary>
    public bool UsesLoop => _loopDialer is not null;

    /// <summary>From here, new connections go through <paramref name="loop"/>, when the backend speaks plain HTTP.</summary>
    public void UseLoop(EventLoop loop)
    {
        if (_backend.Scheme == Uri.UriSchemeHttp)
        {
            _loopDialer = new LoopBackendDialer(loop, _backend);
        }
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

        lock (_lock)
        {
            if (!_disposed && _idle.Count < _maxIdle)
            {
                _idle.Add(new IdleConnection(connection, _time.GetTimestamp()));
                return ValueTask.CompletedTask;
            }

            if (!_disposed)
            {
                return CloseAsync(connection, CloseCause.PoolFull, streamId);
            }
        }

        return connection.DisposeAsync();
    }

    public async ValueTask DisposeAsync()
    {
        await _sweep.DisposeAsync();
        IdleConnection[] idle;
        lock (_lock)
        {
            _disposed = true;
            idle = [.. _idle];
            _idle.Clear();
        }

        foreach (IdleConnection entry in idle)
        {
            await entry.Connection.DisposeAsync();
        }
    }

    private bool TryPop([NotNullWhen(true)] out BackendConnection? connection)
    {
        lock (_lock)
        {
            if (_idle.Count == 0)
            {
                connection = null;
                return false;
            }

            connection = _idle[^1].Connection;
            _idle.RemoveAt(_idle.Count - 1);
            return true;
        }
    }

    private void CloseExpired()
    {
        long oldestKept = _time.GetTimestamp() - _idleTimeoutTicks;
        IdleConnection[] expired;
        lock (_lock)
        {
            int count = 0;
            while (count < _idle.Count && _idle[count].IdleSince <= oldestKept)
            {
                count++;
            }

            if (count == 0)
            {
                return;
            }

            expired = [.. _idle.GetRange(0, count)];
            _idle.RemoveRange(0, count);
        }

        _ = CloseAllAsync(expired);
    }

    private async Task CloseAllAsync(IdleConnection[] expired)
    {
        foreach (IdleConnection entry in expired)
        {
            await CloseQuietlyAsync(entry.Connection, CloseCause.IdleTimeout, streamId: 0);
        }
    }

    /// <summary>Closes a connection nobody waits on: a failure to close it has no one to tell.</summary>
    private async Task CloseQuietlyAsync(BackendConnection connection, CloseCause cause, uint streamId)
    {
        try
        {
            await CloseAsync(connection, cause, streamId);
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or System.Net.Sockets.SocketException)
        {
            // The connection is gone either way.
        }
    }

    private ValueTask CloseAsync(BackendConnection connection, CloseCause cause, uint streamId)
    {
        _onClosed(cause, streamId);
        return connection.DisposeAsync();
    }

    private readonly record struct IdleConnection(BackendConnection Connection, long IdleSince);
}
