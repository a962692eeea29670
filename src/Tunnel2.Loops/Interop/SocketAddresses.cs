using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace Tunnel2.Loops.Interop;

/// <summary>struct sockaddr_in and sockaddr_in6, written by hand (the runtime's own SocketAddress allocates).</summary>
internal static class SocketAddresses
{
    /// <returns>The length of the address written: 16 (IPv4) or 28 (IPv6).</returns>
    public static int Write(IPEndPoint endPoint, Span<byte> into)
    {
        into.Clear();
        bool v6 = endPoint.AddressFamily == AddressFamily.InterNetworkV6;
        into[0] = (byte)(v6 ? LibC.AfInet6 : LibC.AfInet);
        into[2] = (byte)(endPoint.Port >> 8);
        into[3] = (byte)endPoint.Port;
        if (!v6)
        {
            endPoint.Address.TryWriteBytes(into.Slice(4, 4), out _);
            return 16;
        }
        endPoint.Address.TryWriteBytes(into.Slice(8, 16), out _);
        uint scope = (uint)endPoint.Address.ScopeId;
        into[24] = (byte)scope;
        into[25] = (byte)(scope >> 8);
        into[26] = (byte)(scope >> 16);
        into[27] = (byte)(scope >> 24);
        return 28;
    }

    /// <summary>The address accept4 wrote: IPv4 or IPv6 (an IPv4-mapped one stays as the kernel gave it, as the runtime's sockets do); null for another family.</summary>
    public static IPEndPoint? Read(ReadOnlySpan<byte> from)
    {
        if (from.Length < 16)
        {
            return null;
        }
        int family = from[0] | (from[1] << 8);
        int port = (from[2] << 8) | from[3];
        if (family == LibC.AfInet)
        {
            return new IPEndPoint(new IPAddress(from.Slice(4, 4)), port);
        }
        if (family == LibC.AfInet6 && from.Length >= 28)
        {
            long scope = BinaryPrimitives.ReadUInt32LittleEndian(from.Slice(24, 4));
            return new IPEndPoint(new IPAddress(from.Slice(8, 16), scope), port);
        }
        return null;
    }
}
