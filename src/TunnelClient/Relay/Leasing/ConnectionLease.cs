using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Authentication;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Handshake;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Leasing;

/// <summary>
/// The lease step: a connection to the exchange's backend for one attempt, an idle keep-alive one from its pool or a new
/// one, and back to the pool (or closed) when the attempt ends. While it is leased, a reset of the stream ends its I/O
/// (the stream's abort listener); whatever ends an exchange early leaves it in an unknown state, so only a clean end
/// (<see cref="RelayExchange.CloseCause"/> null) lets it be reused.
/// </summary>
internal static class ConnectionLease
{
    /// <returns>Null once <see cref="RelayExchange.Connection"/> is set; the failure when no connection could be made.</returns>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public static async ValueTask<RelayFailure?> LeaseAsync(RelayExchange exchange)
    {
        Backend backend = exchange.Backend;
#pragma warning disable CA2000 // the connection becomes exchange.Connection, which ReturnAsync gives back to the pool or closes
        // An upgrade's connection may be taken over as a socket by the upgrade relays: never one on the loop.
        bool onLoopAllowed = !exchange.IsUpgrade;
        BackendConnection? connection = null;
        exchange.ConnectionReused = (onLoopAllowed || !backend.Pool.UsesLoop) && backend.Pool.TryRentIdle(exchange.Stream.Id, out connection);
        if (!exchange.ConnectionReused)
        {
            try
            {
                connection = await backend.ConnectAsync(onLoopAllowed, exchange.Stream.Aborted);
            }
            catch (Exception ex) when (!exchange.Stream.IsAborted
                                       && ex is SocketException or IOException or AuthenticationException or OperationCanceledException)
            {
                // A version-4 server may try the request on another client when told it never reached a backend.
                ProtocolErrorCode code = exchange.Stream.Uplink.Settings.ProtocolVersion >= HandshakeProtocol.HealthVersion
                    ? ProtocolErrorCode.BackendConnectFailed
                    : ProtocolErrorCode.BackendUnreachable;
                return new RelayFailure(code, "backend-unreachable", ex.Message);
            }
        }

        exchange.Connection = connection!;
#pragma warning restore CA2000
        exchange.CloseCause = CloseCause.ExchangeFailed;
        exchange.Stream.SetAbortListener(exchange.Connection);
        return null;
    }

    /// <summary>Gives the attempt's connection back to its pool, or closes it when it may not be reused.</summary>
    public static ValueTask ReturnAsync(RelayExchange exchange)
    {
        if (exchange.Stream.ClearAbortListener())
        {
            exchange.CloseCause ??= CloseCause.ExchangeFailed;
        }

        BackendConnection connection = exchange.Connection!;
        exchange.Connection = null;
        if (exchange.Stream.IsAborted)
        {
            // The abort takes the listener and calls it a moment later on its own thread, so the exchange can end here
            // first and find no listener to clear: the connection is reset here too, before the pool's close would end
            // it with a FIN, which feeds the backend what is queued of an unfinished request (on the loop, the abort
            // must also reach the loop before the pool's close). A second reset is harmless.
            connection.OnStreamAborted();
        }

        return exchange.Backend.Pool.ReturnOrCloseAsync(connection, exchange.CloseCause, exchange.Stream.Id);
    }
}
