using System.Buffers.Binary;
using System.Net.Sockets;
using Tunnel2.Protocol.Tcp;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// The PROXY protocol v2 header (haproxy.org/download/2.9/doc/proxy-protocol.txt, §2.2): the 12-byte signature, version 2
/// with the PROXY command, TCP over IPv4 or IPv6, then source (the caller) and destination (the server's public TCP port)
/// addresses and ports. Sent before any other byte to a target that expects it.
/// </summary>
public static class ProxyProtocolV2
{
    public static ReadOnlySpan<byte> Signature => [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A];

    /// <summary>The header's length for this caller: 28 bytes over IPv4, 52 over IPv6.</summary>
    public static int LengthOf(in TcpStreamOpen open) => 16 + (IsIPv4(open) ? 12 : 36);

    public static int Write(in TcpStreamOpen open, Span<byte> destination)
    {
        bool v4 = IsIPv4(open);
        Signature.CopyTo(destination);
        destination[12] = 0x21; // version 2, PROXY
        destination[13] = v4 ? (byte)0x11 : (byte)0x21; // TCP over IPv4 / IPv6
        int addresses = v4 ? 12 : 36;
        BinaryPrimitives.WriteUInt16BigEndian(destination[14..], (ushort)addresses);
        int size = v4 ? 4 : 16;
        open.Caller.Address.TryWriteBytes(destination[16..], out _);
        open.Listener.Address.TryWriteBytes(destination[(16 + size)..], out _);
        BinaryPrimitives.WriteUInt16BigEndian(destination[(16 + (2 * size))..], (ushort)open.Caller.Port);
        BinaryPrimitives.WriteUInt16BigEndian(destination[(18 + (2 * size))..], (ushort)open.Listener.Port);
        return 16 + addresses;
    }

    private static bool IsIPv4(in TcpStreamOpen open) => open.Caller.Address.AddressFamily == AddressFamily.InterNetwork;
}
