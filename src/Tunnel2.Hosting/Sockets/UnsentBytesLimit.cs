using System.Net.Sockets;

namespace Tunnel2.Hosting.Sockets;

/// <summary>
/// TCP_NOTSENT_LOWAT: the most bytes a socket keeps queued and not yet sent before a write waits. Without it the kernel
/// grows a socket's send buffer (tcp_wmem, up to 4 MiB) whenever the peer reads slowly, so a crowd of slow callers
/// parks gigabytes in kernel memory that flow control never sees, and under the resulting TCP memory pressure Linux
/// squeezes every socket, the one uplink that carries the whole session first (docs/protocol.md §4). The limit bounds
/// only what waits unsent; what is in flight still follows the congestion window, so a fast peer loses no speed.
/// </summary>
public static class UnsentBytesLimit
{
    /// <summary>The default: enough unsent bytes for a 10 Gbit/s link to drain while the writer wakes up (~0.1 ms).</summary>
    public const int Default = 128 * 1024;

    private const int LinuxOption = 25;
    private const int BsdOption = 0x201;

    /// <summary>Sets the limit on <paramref name="socket"/> (accepted sockets inherit it from their listener); false when <paramref name="bytes"/> is 0 or the system has no such option.</summary>
    public static bool TryApply(Socket socket, int bytes)
    {
        int option = OperatingSystem.IsLinux() ? LinuxOption
            : OperatingSystem.IsMacOS() || OperatingSystem.IsFreeBSD() ? BsdOption
            : 0;
        return bytes > 0 && option != 0 && TcpIntOption.TrySet(socket, option, bytes);
    }

    /// <summary>The limit a socket has now, or -1 when it cannot be read (for tests and diagnostics).</summary>
    public static int Read(Socket socket) => OperatingSystem.IsLinux() ? TcpIntOption.Read(socket, LinuxOption) : -1;
}
