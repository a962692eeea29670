using System.Net.Sockets;

namespace Tunnel2.Hosting.Sockets;

/// <summary>
/// SO_RCVBUF on an uplink socket, at both ends. Left to itself the kernel grows the one socket that carries a whole
/// session to several MiB, and on loopback or a short path the peer fills it in one burst. When the host runs short of
/// TCP memory (tcp_mem, typically because many slow callers hold full buffers of their own), Linux lets each socket keep
/// only a fair share, drops what the uplink's burst brings beyond it, and every stream of the session then waits for a
/// retransmission timeout. A receive buffer below that share keeps the uplink out of the squeeze (measured in
/// docs/benchmarks/2026-11-24-storm.md); the price is a window of this size per round trip on a long path.
/// </summary>
public static class UplinkReceiveBuffer
{
    /// <summary>256 KiB: 1,000 slow readers at 64 KiB/s keep their rate (0.99 delivered); larger buffers fell to 0.2–0.6.</summary>
    public const int Default = 256 * 1024;

    /// <summary>Sets the buffer (0 leaves the kernel's autotuning); false when it was not set.</summary>
    public static bool TryApply(Socket socket, int bytes)
    {
        if (bytes <= 0)
        {
            return false;
        }

        try
        {
            socket.ReceiveBufferSize = bytes;
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
