using System.Net.Sockets;

namespace Tunnel2.Hosting.Sockets;

/// <summary>
/// TCP_MAXSEG on an uplink socket, at both ends: the largest segment the peer may send on it (announced in the
/// handshake; a listener's accepted sockets inherit it). It only ever lowers the path's own: on a network with a
/// 1,500-byte MTU the segments are ~1,460 bytes anyway and this changes nothing. On loopback they are 64 KiB, and
/// when the host runs short of TCP memory Linux admits only a fair share per socket (tcp_mem's high mark divided by
/// the sockets, ~60 KB with 40,000 of them): the second 64 KiB segment of a burst is dropped and the whole session
/// waits for a retransmission. 16 KiB segments fit three to that share (docs/benchmarks/2026-11-24-storm.md).
/// </summary>
public static class UplinkSegmentSize
{
    /// <summary>16 KiB: at ~10,000 slow readers on loopback, probes after the connect burst answered in 0.6–0.7 s at p99 instead of 9 s.</summary>
    public const int Default = 16 * 1024;

    private const int TcpMaxSegment = 2;

    /// <summary>Sets the limit before connect or listen (0 leaves the path's own); false when it was not set.</summary>
    public static bool TryApply(Socket socket, int bytes) =>
        bytes > 0 && OperatingSystem.IsLinux() && TcpIntOption.TrySet(socket, TcpMaxSegment, bytes);

    /// <summary>The limit a socket has now (its MSS once connected), or -1 when it cannot be read.</summary>
    public static int Read(Socket socket) => OperatingSystem.IsLinux() ? TcpIntOption.Read(socket, TcpMaxSegment) : -1;
}
