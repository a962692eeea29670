using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Frames;

public sealed class FrameReaderTests
{
    private const int Max = 1024;

    private static readonly byte[] DataFrame = FrameBytes.Frame(FrameType.Data, FrameFlags.EndStream, 7, "hello"u8);
    private static readonly byte[] PingFrame = FrameBytes.Frame(FrameType.Ping, 0, FrameBytes.U64(0x0102030405060708));

    [Fact]
    public void An_empty_buffer_holds_no_frame()
    {
        var buffer = ReadOnlySequence<byte>.Empty;

        Assert.False(FrameReader.TryReadFrame(ref buffer, Max, out _, out _));
        Assert.True(buffer.IsEmpty);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(9)]
    public void A_partial_header_returns_false_and_leaves_the_buffer_untouched(int available)
    {
        var original = new ReadOnlySequence<byte>(DataFrame, 0, available);
        ReadOnlySequence<byte> buffer = original;

        Assert.False(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader header, out ReadOnlySequence<byte> payload));

        Assert.Equal(original, buffer);
        Assert.Equal(default, header);
        Assert.True(payload.IsEmpty);
    }

    [Fact]
    public void A_partial_payload_returns_false_and_leaves_the_buffer_untouched()
    {
        for (int available = FrameHeader.Size; available < DataFrame.Length; available++)
        {
            var original = new ReadOnlySequence<byte>(DataFrame, 0, available);
            ReadOnlySequence<byte> buffer = original;

            Assert.False(FrameReader.TryReadFrame(ref buffer, Max, out _, out _));

            Assert.Equal(original.Start, buffer.Start);
            Assert.Equal(original.End, buffer.End);
        }
    }

    [Fact]
    public void An_exact_frame_is_cut_off_whole()
    {
        var buffer = new ReadOnlySequence<byte>(DataFrame);

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader header, out ReadOnlySequence<byte> payload));

        Assert.Equal(new FrameHeader(5, FrameType.Data, FrameFlags.EndStream, 7), header);
        Assert.Equal("hello"u8.ToArray(), payload.ToArray());
        Assert.True(buffer.IsEmpty);
    }

    [Fact]
    public void A_frame_with_an_empty_payload_is_read()
    {
        byte[] end = FrameBytes.Frame(FrameType.Data, FrameFlags.EndStream, 3, []);
        var buffer = new ReadOnlySequence<byte>(end);

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader header, out ReadOnlySequence<byte> payload));

        Assert.Equal(0, header.PayloadLength);
        Assert.True(header.EndStream);
        Assert.True(payload.IsEmpty);
        Assert.True(buffer.IsEmpty);
    }

    [Fact]
    public void Two_frames_back_to_back_are_read_one_after_the_other()
    {
        var buffer = new ReadOnlySequence<byte>(FrameBytes.Concat(DataFrame, PingFrame));

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader first, out ReadOnlySequence<byte> firstPayload));
        Assert.Equal(FrameType.Data, first.Type);
        Assert.Equal("hello"u8.ToArray(), firstPayload.ToArray());
        Assert.Equal(PingFrame.Length, buffer.Length);

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader second, out ReadOnlySequence<byte> secondPayload));
        Assert.Equal(FrameType.Ping, second.Type);
        Assert.Equal(0u, second.StreamId);
        Assert.Equal(PingFrame[FrameHeader.Size..], secondPayload.ToArray());
        Assert.True(buffer.IsEmpty);

        Assert.False(FrameReader.TryReadFrame(ref buffer, Max, out _, out _));
    }

    [Fact]
    public void A_whole_frame_followed_by_a_partial_one_yields_the_first_and_keeps_the_rest()
    {
        byte[] bytes = FrameBytes.Concat(DataFrame, PingFrame[..12]);
        var buffer = new ReadOnlySequence<byte>(bytes);

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out _, out _));
        ReadOnlySequence<byte> rest = buffer;
        Assert.False(FrameReader.TryReadFrame(ref buffer, Max, out _, out _));

        Assert.Equal(rest, buffer);
        Assert.Equal(PingFrame[..12], buffer.ToArray());
    }

    [Fact]
    public void The_payload_is_a_slice_of_the_buffer_not_a_copy()
    {
        var buffer = new ReadOnlySequence<byte>(DataFrame);

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out _, out ReadOnlySequence<byte> payload));

        Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray(payload.First, out ArraySegment<byte> segment));
        Assert.Same(DataFrame, segment.Array);
        Assert.Equal(FrameHeader.Size, segment.Offset);
    }

    [Fact]
    public void A_payload_of_exactly_the_maximum_is_accepted()
    {
        byte[] frame = FrameBytes.Frame(FrameType.Data, 1, new byte[Max]);
        var buffer = new ReadOnlySequence<byte>(frame);

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader header, out ReadOnlySequence<byte> payload));

        Assert.Equal(Max, header.PayloadLength);
        Assert.Equal(Max, payload.Length);
    }

    [Theory]
    [InlineData((uint)Max + 1)]
    [InlineData(0x7FFFFFFFu)]
    [InlineData(0x80000000u)]
    [InlineData(0xFFFFFFFFu)]
    public void An_oversized_length_is_rejected_as_soon_as_the_header_is_there(uint declared)
    {
        // Only the ten header bytes: the payload has not arrived, and must never have to.
        var buffer = new ReadOnlySequence<byte>(FrameBytes.Header(declared, (byte)FrameType.Data, 0, 1));

        var error = Assert.Throws<ProtocolViolationException>(() => FrameReader.TryReadFrame(ref buffer, Max, out _, out _));

        Assert.Contains("exceeds", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_length_beyond_int_max_is_rejected_even_with_the_largest_maximum()
    {
        var buffer = new ReadOnlySequence<byte>(FrameBytes.Header(0x80000000u, (byte)FrameType.Data, 0, 1));

        Assert.Throws<ProtocolViolationException>(() => FrameReader.TryReadFrame(ref buffer, int.MaxValue, out _, out _));
    }

    [Fact]
    public void A_zero_maximum_admits_only_empty_payloads()
    {
        var empty = new ReadOnlySequence<byte>(FrameBytes.Frame(FrameType.Data, 1, []));
        var one = new ReadOnlySequence<byte>(FrameBytes.Frame(FrameType.Data, 1, [42]));

        Assert.True(FrameReader.TryReadFrame(ref empty, 0, out _, out _));
        Assert.Throws<ProtocolViolationException>(() => FrameReader.TryReadFrame(ref one, 0, out _, out _));
    }

    public static TheoryData<byte> UnknownTypes()
    {
        var data = new TheoryData<byte> { 0 };
        for (int type = 11; type <= 255; type++)
        {
            data.Add((byte)type);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(UnknownTypes))]
    public void An_unknown_type_is_rejected_once_the_header_is_there(byte type)
    {
        var headerOnly = new ReadOnlySequence<byte>(FrameBytes.Header(4, type, 0, 1));
        var whole = new ReadOnlySequence<byte>(FrameBytes.Concat(FrameBytes.Header(4, type, 0, 1), [1, 2, 3, 4]));

        Assert.Throws<ProtocolViolationException>(() => FrameReader.TryReadFrame(ref headerOnly, Max, out _, out _));
        Assert.Throws<ProtocolViolationException>(() => FrameReader.TryReadFrame(ref whole, Max, out _, out _));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(8)]
    public void The_first_and_last_known_types_are_accepted(byte type)
    {
        var buffer = new ReadOnlySequence<byte>(FrameBytes.Concat(FrameBytes.Header(0, type, 0, 1)));

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader header, out _));
        Assert.Equal((FrameType)type, header.Type);
    }

    [Fact]
    public void Flags_and_stream_id_pass_through_unchanged()
    {
        var buffer = new ReadOnlySequence<byte>(FrameBytes.Concat(FrameBytes.Header(0, (byte)FrameType.Data, 0xA5, 0xFFFFFFFE)));

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader header, out _));

        Assert.Equal((FrameFlags)0xA5, header.Flags);
        Assert.Equal(0xFFFFFFFEu, header.StreamId);
    }
}
