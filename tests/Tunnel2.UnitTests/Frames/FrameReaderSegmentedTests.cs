using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Frames;

/// <summary>Frames whose bytes are spread over several segments, as a pipe hands them out.</summary>
public sealed class FrameReaderSegmentedTests
{
    private const int Max = 1024;

    private static readonly byte[] First = FrameBytes.Frame(FrameType.Data, FrameFlags.None, 0x01020304, "segmented payload"u8);
    private static readonly byte[] Second = FrameBytes.Frame(FrameType.WindowUpdate, 9, FrameBytes.U32(65536));
    private static readonly byte[] Both = FrameBytes.Concat(First, Second);

    [Fact]
    public void Two_frames_read_the_same_wherever_the_bytes_are_cut()
    {
        for (int cut = 0; cut <= Both.Length; cut++)
        {
            ReadOnlySequence<byte> buffer = Sequences.SplitAt(Both, cut);
            AssertReadsBoth(ref buffer, $"cut at {cut}");
        }
    }

    [Fact]
    public void Two_frames_read_the_same_when_cut_twice_anywhere()
    {
        for (int a = 0; a <= Both.Length; a++)
        {
            for (int b = a; b <= Both.Length; b++)
            {
                ReadOnlySequence<byte> buffer = Sequences.SplitAt(Both, a, b);
                AssertReadsBoth(ref buffer, $"cuts at {a} and {b}");
            }
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(7)]
    [InlineData(11)]
    public void Two_frames_read_the_same_in_tiny_segments(int segmentSize)
    {
        ReadOnlySequence<byte> buffer = Sequences.Chunked(Both, segmentSize);

        AssertReadsBoth(ref buffer, $"segments of {segmentSize}");
    }

    [Fact]
    public void Empty_segments_in_the_middle_change_nothing()
    {
        ReadOnlySequence<byte> buffer = Sequences.SplitAt(Both, 3, 3, 3, 10, 10, First.Length, First.Length);

        AssertReadsBoth(ref buffer, "with empty segments");
    }

    [Fact]
    public void A_partial_frame_split_over_segments_returns_false_and_stays_untouched()
    {
        for (int available = 0; available < First.Length; available++)
        {
            ReadOnlySequence<byte> original = Sequences.Chunked(First[..available], 3);
            ReadOnlySequence<byte> buffer = original;

            Assert.False(FrameReader.TryReadFrame(ref buffer, Max, out _, out _));

            Assert.Equal(original.Start, buffer.Start);
            Assert.Equal(original.End, buffer.End);
        }
    }

    [Fact]
    public void An_oversized_header_split_over_segments_is_still_rejected_before_its_payload()
    {
        byte[] header = FrameBytes.Header(Max + 1, (byte)FrameType.Data, 0, 1);
        ReadOnlySequence<byte> buffer = Sequences.Chunked(header, 1);

        Assert.Throws<ProtocolViolationException>(() => FrameReader.TryReadFrame(ref buffer, Max, out _, out _));
    }

    [Fact]
    public void An_unknown_type_split_over_segments_is_rejected()
    {
        byte[] header = FrameBytes.Header(0, 0x42, 0, 1);
        ReadOnlySequence<byte> buffer = Sequences.SplitAt(header, 4, 5);

        Assert.Throws<ProtocolViolationException>(() => FrameReader.TryReadFrame(ref buffer, Max, out _, out _));
    }

    private static void AssertReadsBoth(ref ReadOnlySequence<byte> buffer, string because)
    {
        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader first, out ReadOnlySequence<byte> firstPayload), because);
        Assert.Equal(new FrameHeader(First.Length - FrameHeader.Size, FrameType.Data, FrameFlags.None, 0x01020304), first);
        Assert.Equal(First[FrameHeader.Size..], firstPayload.ToArray());

        Assert.True(FrameReader.TryReadFrame(ref buffer, Max, out FrameHeader second, out ReadOnlySequence<byte> secondPayload), because);
        Assert.Equal(new FrameHeader(4, FrameType.WindowUpdate, FrameFlags.None, 9), second);
        Assert.Equal(Second[FrameHeader.Size..], secondPayload.ToArray());

        Assert.True(buffer.IsEmpty, because);
        Assert.False(FrameReader.TryReadFrame(ref buffer, Max, out _, out _), because);
    }
}
