namespace Tunnel2.Protocol.Multiplexing;

/// <summary>Receives the streams the peer opens (client side). Called on the uplink's reader loop: must not block.</summary>
public interface IUplinkStreamHandler
{
    void OnStreamOpened(UplinkStream stream);
}
