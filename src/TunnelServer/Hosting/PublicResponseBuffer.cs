using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Tunnel2.TunnelServer.Configuration;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>
/// How many response bytes Kestrel buffers per public connection ahead of the socket before a flush waits
/// (<c>TunnelServer:Listeners:PublicResponseBuffer</c>). The uplink's reader writes a Data payload into the response and
/// keeps doing so only while the flush completes at once; a payload above this limit never does, and every one after it
/// goes through the stream's copy loop on the thread pool. Both limits are set: plain HTTP/1.1 over the socket
/// transport follows the transport's own (MaxWriteBufferSize), the loop transport, TLS and HTTP/2 follow Kestrel's.
/// </summary>
public static class PublicResponseBuffer
{
    public static void Apply(ServerListenersOptions listeners, KestrelServerLimits limits) =>
        limits.MaxResponseBufferSize = listeners.PublicResponseBuffer;

    public static void Apply(ServerListenersOptions listeners, SocketTransportOptions sockets) =>
        sockets.MaxWriteBufferSize = listeners.PublicResponseBuffer;
}
