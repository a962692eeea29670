using System.Buffers;
using System.Buffers.Binary;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;

namespace Tunnel2.UnitTests.Infrastructure;

/// <summary>Encodes frames and heads by hand, the way a peer puts them on the wire.</summary>
internal static class FrameBytes
{
    public static byte[] Frame(FrameType type, FrameFlags flags, uint streamId, ReadOnlySpan<byte> payload)
    {
        var bytes = new byte[FrameHeader.Size + payload.Length];
        new FrameHeader(payload.Length, type, flags, streamId).WriteTo(bytes);
        payload.CopyTo(bytes.AsSpan(FrameHeader.Size));
        return bytes;
    }

    public static byte[] Frame(FrameType type, uint streamId, ReadOnlySpan<byte> payload) => Frame(type, FrameFlags.None, streamId, payload);

    /// <summary>Only the 10 header bytes, with any declared length and any type byte.</summary>
    public static byte[] Header(uint declaredLength, byte type, byte flags, uint streamId)
    {
        var bytes = new byte[FrameHeader.Size];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, declaredLength);
        bytes[4] = type;
        bytes[5] = flags;
        BinaryPrimitives.WriteUInt32BigEndian(bytes.AsSpan(6), streamId);
        return bytes;
    }

    public static byte[] U32(uint value)
    {
        var bytes = new byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, value);
        return bytes;
    }

    public static byte[] U64(ulong value)
    {
        var bytes = new byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(bytes, value);
        return bytes;
    }

    public static byte[] GoAway(uint lastStreamId, ProtocolErrorCode code)
    {
        var bytes = new byte[8];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, lastStreamId);
        BinaryPrimitives.WriteUInt32BigEndian(bytes.AsSpan(4), (uint)code);
        return bytes;
    }

    public static byte[] Encode(RequestHead head)
    {
        var writer = new ArrayBufferWriter<byte>();
        HeadCodec.WriteRequestHead(writer, head);
        return writer.WrittenSpan.ToArray();
    }

    public static byte[] Encode(ResponseHead head)
    {
        var writer = new ArrayBufferWriter<byte>();
        HeadCodec.WriteResponseHead(writer, head);
        return writer.WrittenSpan.ToArray();
    }

    public static byte[] Concat(params byte[][] parts)
    {
        var all = new byte[parts.Sum(p => p.Length)];
        int offset = 0;
        foreach (byte[] part in parts)
        {
            part.CopyTo(all, offset);
            offset += part.Length;
        }

        return all;
    }

    public static string Hex(ReadOnlySpan<byte> bytes) => Convert.ToHexString(bytes);
}
