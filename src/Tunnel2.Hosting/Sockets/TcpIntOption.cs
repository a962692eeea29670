using System.Net.Sockets;

namespace Tunnel2.Hosting.Sockets;

/// <summary>An integer TCP-level socket option that .NET has no name for, set and read by its number.</summary>
internal static class TcpIntOption
{
    private const int IpProtoTcp = 6;

    /// <summary>Sets it on a TCP socket over IPv4 or IPv6; false when the socket is another kind or the system refused.</summary>
    public static bool TrySet(Socket socket, int option, int value)
    {
        if (socket.AddressFamily is not (AddressFamily.InterNetwork or AddressFamily.InterNetworkV6))
        {
            return false;
        }

        Span<byte> bytes = stackalloc byte[sizeof(int)];
        BitConverter.TryWriteBytes(bytes, value);
        try
        {
            socket.SetRawSocketOption(IpProtoTcp, option, bytes);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>Its value now, or -1 when it cannot be read.</summary>
    public static int Read(Socket socket, int option)
    {
        Span<byte> bytes = stackalloc byte[sizeof(int)];
        try
        {
            return socket.GetRawSocketOption(IpProtoTcp, option, bytes) == sizeof(int) ? BitConverter.ToInt32(bytes) : -1;
        }
        catch (SocketException)
        {
            return -1;
        }
    }
}
