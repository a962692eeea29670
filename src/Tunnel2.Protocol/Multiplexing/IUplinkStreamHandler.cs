namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Receives the streams the peer opens (client side). Called on the uplink's reader loop: must not block. When
/// <see cref="UplinkStream.MayStartOnReader"/> is true, the handler may run its work on this thread until its first wait
/// (a small step, e.g. sending the request to a backend), which saves a thread-pool hand-off; else it queues it.
/// </summary>
public interface IUplinkStreamHandler
{
    void OnStreamOpened(UplinkStream stream);
}
