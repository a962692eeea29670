using System.Net;
using System.Net.Sockets;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Leasing;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Steps;

/// <summary>The client's lease step on its own: a new connection, back to the pool after a clean end, reused next.</summary>
public sealed class ConnectionLeaseTests : IAsyncDisposable
{
    private readonly UplinkPair _uplinks = UplinkPair.Start();
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);

    public ConnectionLeaseTests() => _listener.Start();

    public async ValueTask DisposeAsync()
    {
        _listener.Stop();
        _listener.Dispose();
        await _uplinks.DisposeAsync();
    }

    [Fact]
    public async Task A_clean_attempt_returns_its_new_connection_to_the_pool_and_the_next_attempt_reuses_it()
    {
        await using Leased leased = await LeasedAsync();
        RelayExchange first = leased.Exchange;
        BackendConnection connection = first.Connection!;
        Assert.False(first.ConnectionReused);
        Assert.Equal(CloseCause.ExchangeFailed, first.CloseCause); // until the attempt says it ended cleanly

        first.CloseCause = null;
        await ConnectionLease.ReturnAsync(first);
        Assert.Null(first.Connection);
        Assert.Equal(1, leased.Backend.Pool.IdleCount);

        RelayExchange second = await ExchangeAsync(leased.Backend);
        Assert.Null(await ConnectionLease.LeaseAsync(second));
        Assert.True(second.ConnectionReused);
        Assert.Same(connection, second.Connection);
        second.CloseCause = null;
        await ConnectionLease.ReturnAsync(second);
    }

    [Fact]
    public async Task An_attempt_that_did_not_end_cleanly_closes_its_connection_instead_of_pooling_it()
    {
        await using Leased leased = await LeasedAsync();

        await ConnectionLease.ReturnAsync(leased.Exchange);

        Assert.Equal(0, leased.Backend.Pool.IdleCount);
        Assert.Equal(0, await leased.Accepted.ReceiveAsync(new byte[1]).WithTimeout()); // the backend sees the close
    }

    [Fact]
    public async Task A_connection_whose_stream_was_reset_is_reset_even_when_the_exchange_ended_before_the_abort_listener_ran()
    {
        await using Leased leased = await LeasedAsync();
        RelayExchange exchange = leased.Exchange;

        // The race: the abort takes the listener from the stream and calls it a moment later, on its own thread; the
        // exchange, failed by the abort's pipes, returns its connection in between and finds no listener to clear.
        // Here the listener is taken away as the abort does and never called.
        Assert.False(exchange.Stream.ClearAbortListener());
        exchange.Stream.Reset(ProtocolErrorCode.Cancelled);
        await ConnectionLease.ReturnAsync(exchange);

        // A FIN (0) would feed the backend what was queued of the unfinished request first.
        SocketException reset = await Assert.ThrowsAsync<SocketException>(async () => await leased.Accepted.ReceiveAsync(new byte[1]).WithTimeout());
        Assert.Equal(SocketError.ConnectionReset, reset.SocketErrorCode);
    }

    [Fact]
    public async Task A_backend_that_refuses_the_connection_is_a_failure_that_a_server_may_retry_elsewhere()
    {
        int closedPort = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _listener.Stop();
        await using Backend backend = BackendAt(closedPort);
        RelayExchange exchange = await ExchangeAsync(backend);

        RelayFailure? failure = await ConnectionLease.LeaseAsync(exchange);

        Assert.NotNull(failure);
        Assert.Equal("backend-unreachable", failure.Value.Reason);
        Assert.Equal(ProtocolErrorCode.BackendConnectFailed, failure.Value.Code);
        Assert.Null(exchange.Connection);
    }

    /// <summary>A backend at the listener, an exchange for it that has leased a new connection, and the backend's side of that connection.</summary>
    private async Task<Leased> LeasedAsync()
    {
        Backend backend = BackendAt(((IPEndPoint)_listener.LocalEndpoint).Port);
        RelayExchange exchange = await ExchangeAsync(backend);
        Assert.Null(await ConnectionLease.LeaseAsync(exchange));
        Socket accepted = await _listener.AcceptSocketAsync().WithTimeout();
        return new Leased(backend, exchange, accepted);
    }

    private sealed record Leased(Backend Backend, RelayExchange Exchange, Socket Accepted) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            Accepted.Dispose();
            await Backend.DisposeAsync();
        }
    }

    private static Backend BackendAt(int port)
    {
        var url = new Uri($"http://127.0.0.1:{port}");
        var pool = new BackendConnectionPool(url, TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(60), maxIdle: 4, unsentBytesLimit: 0, static (_, _) => { });
        return new Backend(0, new BackendAddress(url, 1), pool, rewritePaths: false);
    }

    private async Task<RelayExchange> ExchangeAsync(Backend backend) =>
        (await RelaySteps.ExchangeAsync(_uplinks, new RequestHead("GET", "/", []), backend)).Exchange;
}
