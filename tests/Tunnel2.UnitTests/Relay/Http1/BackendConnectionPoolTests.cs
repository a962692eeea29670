using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Time.Testing;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Http1;

/// <summary>Idle backend connections are reused most recent first and closed once idle longer than the timeout.</summary>
public sealed class BackendConnectionPoolTests : IAsyncLifetime
{
    private static readonly TimeSpan IdleTimeout = TimeSpan.FromSeconds(60);
    private const int MaxIdle = 3;

    private readonly TcpListener _backend = new(IPAddress.Loopback, 0);
    private readonly FakeTimeProvider _time = new();
    private readonly List<(CloseCause Cause, uint StreamId)> _closed = [];
    private BackendConnectionPool _pool = null!;
    private bool _crowded;

    public ValueTask InitializeAsync()
    {
        _backend.Start();
        var uri = new Uri($"http://127.0.0.1:{((IPEndPoint)_backend.LocalEndpoint).Port}");
        _pool = new BackendConnectionPool(uri, TimeSpan.FromSeconds(5), IdleTimeout, MaxIdle, unsentBytesLimit: 0, OnClosed, _time);
        return ValueTask.CompletedTask;
    }

    public async ValueTask DisposeAsync()
    {
        await _pool.DisposeAsync();
        _backend.Stop();
    }

    [Fact]
    public async Task A_connection_idle_longer_than_the_timeout_is_closed_and_the_backend_sees_the_close()
    {
        (BackendConnection connection, Socket accepted) = await ConnectAsync(streamId: 1);
        await _pool.ReturnOrCloseAsync(connection, cause: null, streamId: 1);
        Assert.Equal(1, _pool.IdleCount);

        _time.Advance(IdleTimeout + IdleTimeout / 4);

        await Eventually.WaitUntilAsync(() => _pool.IdleCount == 0, "the idle connection leaves the pool");
        Assert.Equal(0, await accepted.ReceiveAsync(new byte[1]).WithTimeout());
        Assert.Contains(_closed, c => c.Cause == CloseCause.IdleTimeout);
        accepted.Dispose();
    }

    [Fact]
    public async Task Only_connections_idle_past_the_timeout_are_closed_and_the_most_recent_is_rented_first()
    {
        (BackendConnection older, Socket olderAccepted) = await ConnectAsync(streamId: 1);
        (BackendConnection newer, Socket newerAccepted) = await ConnectAsync(streamId: 2);
        await _pool.ReturnOrCloseAsync(older, cause: null, streamId: 1);
        _time.Advance(IdleTimeout / 2);
        await _pool.ReturnOrCloseAsync(newer, cause: null, streamId: 2);

        // The older has been idle a full timeout, the newer half of one: only the older goes.
        _time.Advance(IdleTimeout / 2);
        await Eventually.WaitUntilAsync(() => _pool.IdleCount == 1, "only the older connection leaves the pool");
        Assert.Equal(0, await olderAccepted.ReceiveAsync(new byte[1]).WithTimeout());

        Assert.True(_pool.TryRentIdle(streamId: 3, out BackendConnection? rented));
        Assert.Same(newer, rented);
        await rented.DisposeAsync();
        olderAccepted.Dispose();
        newerAccepted.Dispose();
    }

    [Fact]
    public async Task Clean_connections_beyond_the_idle_cap_are_closed_when_they_come_back_and_the_rest_are_kept()
    {
        var opened = new List<(BackendConnection Connection, Socket Accepted)>();
        for (uint i = 1; i <= MaxIdle + 2; i++)
        {
            opened.Add(await ConnectAsync(streamId: i)); // all in use at once, as after slots were given back at their heads
        }

        for (int i = 0; i < opened.Count; i++)
        {
            await _pool.ReturnOrCloseAsync(opened[i].Connection, cause: null, streamId: (uint)i + 1);
        }

        Assert.Equal(MaxIdle, _pool.IdleCount);
        Assert.Equal(2, _closed.Count(c => c.Cause == CloseCause.PoolFull));
        Assert.Equal(0, await opened[^1].Accepted.ReceiveAsync(new byte[1]).WithTimeout());
        foreach ((_, Socket accepted) in opened)
        {
            accepted.Dispose();
        }
    }

    [Fact]
    public async Task A_connection_whose_backend_is_crowded_waits_for_the_head_without_a_buffer_and_then_reads_it()
    {
        _crowded = true;
        (BackendConnection connection, Socket accepted) = await ConnectAsync(streamId: 1);

        // The read waits on a zero-byte receive, then takes the bytes as usual.
        ValueTask<ReadResult> read = connection.Input.ReadAsync();
        Assert.False(read.IsCompleted);
        await accepted.SendAsync("HTTP/1.1 200 OK\r\n"u8.ToArray());
        ReadResult result = await read.AsTask().WithTimeout();
        Assert.Equal("HTTP/1.1 200 OK\r\n", Encoding.ASCII.GetString(result.Buffer.ToArray()));
        connection.Input.AdvanceTo(result.Buffer.End);

        await _pool.ReturnOrCloseAsync(connection, CloseCause.ExchangeFailed, streamId: 1);
        accepted.Dispose();
    }

    [Fact]
    public async Task A_connection_returned_after_the_pool_is_disposed_is_closed_not_kept()
    {
        (BackendConnection connection, Socket accepted) = await ConnectAsync(streamId: 1);
        await _pool.DisposeAsync();

        await _pool.ReturnOrCloseAsync(connection, cause: null, streamId: 1);

        Assert.Equal(0, _pool.IdleCount);
        Assert.Equal(0, await accepted.ReceiveAsync(new byte[1]).WithTimeout());
        accepted.Dispose();
    }

    private async Task<(BackendConnection Connection, Socket Accepted)> ConnectAsync(uint streamId)
    {
        Task<Socket> accept = _backend.AcceptSocketAsync();
        Assert.False(_pool.TryRentIdle(streamId, out _));
        BackendConnection connection = await _pool.ConnectAsync(() => _crowded, mayUseLoop: false, CancellationToken.None).WithTimeout();
        return (connection, await accept.WithTimeout());
    }

    private void OnClosed(CloseCause cause, uint streamId)
    {
        lock (_closed)
        {
            _closed.Add((cause, streamId));
        }
    }
}
