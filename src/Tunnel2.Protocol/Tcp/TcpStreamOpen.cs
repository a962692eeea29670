using System.Buffers;
using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using ProtocolViolationException = Tunnel2.Protocol.Frames.ProtocolViolationException;

namespace Tunnel2.Protocol.Tcp;

/// <summary>
/// The payload of a TcpOpen frame (version 5): who connected to the session's public TCP port, and on which address of
/// the server, so the client can tell its target (PROXY protocol v2) and its logs. Encoding: u8 address family (4 or
/// 6), then the caller's address (4 or 16 bytes) and port (u16), then the listener's address and port in the same family.
/// </summary>
public readonly record struct TcpStreamOpen(IPEndPoint Caller, IPEndPoint Listener)
{
    public const byte IPv4 = 4;

    public const byte IPv6 = 6;

    /// <summary>The payload's length for the family of this open.</summary>
    public int EncodedLength => 1 + (2 * (AddressLength(IsIPv4) + 2));

    private bool IsIPv4 => Caller.Address.AddressFamily == AddressFamily.InterNetwork && Listener.Address.AddressFamily == AddressFamily.InterNetwork;

    /// <summary>Both ends in one family: IPv4 when both are (or are IPv4 mapped to IPv6), else IPv6.</summary>
    public static TcpStreamOpen Of(IPEndPoint caller, IPEndPoint listener)
    {
        IPAddress from = Unmap(caller.Address);
        IPAddress to = Unmap(listener.Address);
        if (from.AddressFamily != to.AddressFamily)
        {
            from = from.MapToIPv6();
            to = to.MapToIPv6();
        }

        return new TcpStreamOpen(new IPEndPoint(from, caller.Port), new IPEndPoint(to, listener.Port));
    }

    public void Write(Span<byte> destination)
    {
        bool v4 = IsIPv4;
        destination[0] = v4 ? IPv4 : IPv6;
        int offset = 1;
        foreach (IPEndPoint end in (ReadOnlySpan<IPEndPoint>)[Caller, Listener])
        {
            IPAddress address = v4 ? end.Address : end.Address.MapToIPv6();
            address.TryWriteBytes(destination[offset..], out int written);
            offset += written;
            BinaryPrimitives.WriteUInt16BigEndian(destination[offset..], (ushort)end.Port);
            offset += 2;
        }
    }

    /// <exception cref="Frames.ProtocolViolationException">The payload is not a TcpOpen payload.</exception>
    public static TcpStreamOpen Read(in ReadOnlySequence<byte> payload)
    {
        Span<byte> bytes = stackalloc byte[1 + (2 * 18)];
        if (payload.Length is not (1 + (2 * 6)) and not (1 + (2 * 18)))
        {
            throw new ProtocolViolationException($"TcpOpen frame of {payload.Length} bytes (13 for IPv4, 37 for IPv6).");
        }

        bytes = bytes[..(int)payload.Length];
        payload.CopyTo(bytes);
        bool v4 = bytes[0] == IPv4;
        if ((!v4 && bytes[0] != IPv6) || bytes.Length != 1 + (2 * (AddressLength(v4) + 2)))
        {
            throw new ProtocolViolationException($"TcpOpen frame with address family {bytes[0]} and {bytes.Length} bytes.");
        }

        int size = AddressLength(v4);
        var caller = new IPEndPoint(new IPAddress(bytes.Slice(1, size)), BinaryPrimitives.ReadUInt16BigEndian(bytes[(1 + size)..]));
        int second = 1 + size + 2;
        var listener = new IPEndPoint(new IPAddress(bytes.Slice(second, size)), BinaryPrimitives.ReadUInt16BigEndian(bytes[(second + size)..]));
        return new TcpStreamOpen(caller, listener);
    }

    private static int AddressLength(bool v4) => v4 ? 4 : 16;

    private static IPAddress Unmap(IPAddress address) => address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;
}
