using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Multiplexing;

/// <summary>The frames the writer loop puts on the wire, byte for byte.</summary>
public sealed class OutboundFrameTests
{
    [Fact]
    public void Reset_carries_its_code_as_a_big_endian_u32()
    {
        AssertWrites(OutboundFrame.Reset(7, ProtocolErrorCode.Draining), "00000004" + "04" + "00" + "00000007" + "0000000A");
    }

    [Fact]
    public void WindowUpdate_carries_its_increment_as_a_big_endian_u32()
    {
        AssertWrites(OutboundFrame.WindowUpdate(3, 0x00010000), "00000004" + "05" + "00" + "00000003" + "00010000");
    }

    [Fact]
    public void Ping_and_Pong_carry_eight_opaque_bytes_on_stream_0()
    {
        AssertWrites(OutboundFrame.Ping(0x0102030405060708), "00000008" + "06" + "00" + "00000000" + "0102030405060708");
        AssertWrites(OutboundFrame.Pong(ulong.MaxValue), "00000008" + "07" + "00" + "00000000" + "FFFFFFFFFFFFFFFF");
    }

    [Fact]
    public void GoAway_carries_the_last_stream_id_then_the_code()
    {
        AssertWrites(OutboundFrame.GoAway(0x01020304, ProtocolErrorCode.ProtocolError), "00000008" + "08" + "00" + "00000000" + "01020304" + "00000001");
    }

    [Fact]
    public void A_pooled_payload_is_written_after_the_header()
    {
        byte[] pooled = ArrayPool<byte>.Shared.Rent(16);
        "abc"u8.CopyTo(pooled);

        AssertWrites(OutboundFrame.WithPooledPayload(FrameType.Data, FrameFlags.EndStream, 9, pooled, 3), "00000003" + "03" + "01" + "00000009" + "616263");
    }

    [Fact]
    public void An_empty_end_of_stream_needs_no_buffer()
    {
        AssertWrites(OutboundFrame.WithPooledPayload(FrameType.Data, FrameFlags.EndStream, 2, null, 0), "00000000" + "03" + "01" + "00000002");
    }

    [Fact]
    public void Frames_written_one_after_another_read_back_in_order()
    {
        var writer = new ArrayBufferWriter<byte>();
        OutboundFrame.Ping(1).WriteTo(writer);
        OutboundFrame.Reset(5, ProtocolErrorCode.Cancelled).WriteTo(writer);
        OutboundFrame.WindowUpdate(5, 10).WriteTo(writer);
        var buffer = new ReadOnlySequence<byte>(writer.WrittenMemory);

        var types = new List<FrameType>();
        while (FrameReader.TryReadFrame(ref buffer, 1024, out FrameHeader header, out _))
        {
            types.Add(header.Type);
        }

        Assert.Equal([FrameType.Ping, FrameType.Reset, FrameType.WindowUpdate], types);
        Assert.True(buffer.IsEmpty);
    }

    private static void AssertWrites(OutboundFrame frame, string hex)
    {
        var writer = new ArrayBufferWriter<byte>(1);

        frame.WriteTo(writer);

        Assert.Equal(hex, FrameBytes.Hex(writer.WrittenSpan));
        Assert.Equal(hex.Length / 2, frame.TotalLength);
    }
}
