using System.Net.Sockets;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// Whether a caller's TCP connection has failed, asked of the kernel rather than learnt from a read. Linux keeps what a
/// connection received before a reset readable, and reports the reset only after it: a body held back by the tunnel's
/// windows would otherwise feed a slow backend every byte the kernel took before the caller's reset could be seen
/// (nginx asks the same of <c>SO_ERROR</c> when epoll reports the hang-up).
/// </summary>
internal static class CallerConnection
{
    private const int IpProtoTcp = 6;
    private const int TcpInfo = 11;

    /// <summary><c>tcpi_state</c> of a connection that was reset or is fully closed (<c>TCP_CLOSE</c>).</summary>
    private const byte TcpClose = 7;

    /// <summary>True when the caller's socket is known to be closed or reset; false when it is open or cannot be asked.</summary>
    public static bool HasFailed(HttpContext context)
    {
        if (!OperatingSystem.IsLinux() || context.Features.Get<IConnectionSocketFeature>()?.Socket is not { } socket)
        {
            return false;
        }

        // TCP_INFO starts with tcpi_state; reading it, unlike SO_ERROR, leaves the pending error for the reads to find.
        Span<byte> info = stackalloc byte[8];
        try
        {
            return socket.GetRawSocketOption(IpProtoTcp, TcpInfo, info) >= 1 && info[0] == TcpClose;
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            return true;
        }
    }
}
