namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Receives the streams the peer opens (client side), by role. Called on the uplink's reader loop: must not block. When
/// <see cref="IHttpExchange.MayStartOnReader"/> is true, the handler may run its work on this thread until its first wait
/// (a small step, e.g. sending the request to a backend), which saves a thread-pool hand-off; else it queues it.
/// </summary>
public interface IUplinkStreamHandler
{
    /// <summary>An HTTP exchange: the server sent a request head.</summary>
    void OnExchangeOpened(IHttpExchange exchange);

    /// <summary>A raw TCP stream (a TcpOpen frame, version 5).</summary>
    void OnByteStreamOpened(IByteStream stream);
}
