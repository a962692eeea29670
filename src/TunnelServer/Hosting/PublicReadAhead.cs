using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Tunnel2.ProxyEntry.Configuration;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>
/// How far Kestrel reads ahead of the forwarder on a public connection. Kestrel keeps reading a caller's socket into
/// its own buffers until they hold <c>MaxReadBufferSize</c> (the socket transport's pipe: heads and Content-Length
/// bodies) or <c>MaxRequestBufferSize</c> (chunked bodies, and the pipe over TLS), 1 MiB each by default, whether or
/// not the forwarder can send those bytes on; with a crowd of uploads to a slow backend that read-ahead, not the
/// uplink's windows, is what the server holds. Here both are as small as Kestrel allows: a whole request head (the
/// line and the header fields), so a body waits in the caller's socket and TCP pushes back on the caller.
/// </summary>
public static class PublicReadAhead
{
    private const int Floor = 64 * 1024;

    /// <summary>
    /// Sets Kestrel's header total (ProxyEntry answers heads over its own limit with a problem+json 431; Kestrel's bare
    /// 431 is kept for far larger ones) and the read-ahead of chunked bodies and TLS to one head.
    /// </summary>
    public static void Apply(ProxyEntryOptions proxy, KestrelServerLimits limits)
    {
        limits.MaxRequestHeadersTotalSize = Math.Max(limits.MaxRequestHeadersTotalSize, 2 * proxy.Limits.MaxRequestHeadersBytes);
        limits.MaxRequestBufferSize = Bytes(limits);
    }

    /// <summary>Sets the socket transport's read-ahead (heads and Content-Length bodies) to one head.</summary>

    public static void Apply(KestrelServerLimits limits, SocketTransportOptions sockets) => sockets.MaxReadBufferSize = Bytes(limits);

    private static long Bytes(KestrelServerLimits limits) =>
        Math.Max(Floor, (long)limits.MaxRequestHeadersTotalSize + limits.MaxRequestLineSize);
}
