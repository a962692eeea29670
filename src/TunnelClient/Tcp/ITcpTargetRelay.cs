using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>Relays each TCP stream the server opens to the target: on the event loop (<see cref="LoopTargetRelay"/>) or the runtime's sockets (<see cref="TcpTargetRelay"/>).</summary>
public interface ITcpTargetRelay
{
    /// <summary>Called on the uplink's reader thread, before any Data frame of the stream; must not block.</summary>
    void OnStreamOpened(IByteStream stream);
}
