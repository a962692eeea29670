using System.Buffers.Binary;

namespace Tunnel2.Protocol.Frames;

/// <summary>
/// The fixed 10-byte frame header: payload length (u32, big endian), type (u8), flags (u8), stream id (u32, big endian).
/// </summary>
public readonly record struct FrameHeader(int PayloadLength, FrameType Type, FrameFlags Flags, uint StreamId)
{
    public const int Size = 10;

    public bool EndStream => (Flags & FrameFlags.EndStream) != 0;

    public void WriteTo(Span<byte> destination)
    {
        BinaryPrimitives.WriteUInt32BigEndian(destination, (uint)PayloadLength);
        destination[4] = (byte)Type;
        destination[5] = (byte)Flags;
        BinaryPrimitives.WriteUInt32BigEndian(destination[6..], StreamId);
    }

    public static FrameHeader ReadFrom(ReadOnlySpan<byte> source)
    {
        uint length = BinaryPrimitives.ReadUInt32BigEndian(source);
        return new FrameHeader(
            length > int.MaxValue ? -1 : (int)length,
            (FrameType)source[4],
            (FrameFlags)source[5],
            BinaryPrimitives.ReadUInt32BigEndian(source[6..]));
    }
}
