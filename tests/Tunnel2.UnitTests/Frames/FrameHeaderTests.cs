using Tunnel2.Protocol.Frames;

namespace Tunnel2.UnitTests.Frames;

public sealed class FrameHeaderTests
{
    public static TheoryData<FrameType, FrameFlags> EveryTypeAndFlag()
    {
        var data = new TheoryData<FrameType, FrameFlags>();
        foreach (FrameType type in Enum.GetValues<FrameType>())
        {
            data.Add(type, FrameFlags.None);
            data.Add(type, FrameFlags.EndStream);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(EveryTypeAndFlag))]
    public void Round_trips_every_frame_type(FrameType type, FrameFlags flags)
    {
        var header = new FrameHeader(0x00_01_02_03, type, flags, 0xA0B0C0D0);
        var bytes = new byte[FrameHeader.Size];

        header.WriteTo(bytes);
        FrameHeader read = FrameHeader.ReadFrom(bytes);

        Assert.Equal(header, read);
        Assert.Equal(flags == FrameFlags.EndStream, read.EndStream);
    }

    [Fact]
    public void Every_frame_type_is_covered_by_the_round_trip()
    {
        // The protocol has exactly ten frame types, 1..10 (docs/protocol.md §2; Health came with version 4, TcpOpen with 5).
        Assert.Equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], Enum.GetValues<FrameType>().Select(t => (int)t));
    }

    [Fact]
    public void Writes_length_and_stream_id_big_endian_with_type_and_flags_between()
    {
        var bytes = new byte[FrameHeader.Size];

        new FrameHeader(0x01020304, FrameType.Data, FrameFlags.EndStream, 0x0A0B0C0D).WriteTo(bytes);

        Assert.Equal(new byte[] { 0x01, 0x02, 0x03, 0x04, 3, 1, 0x0A, 0x0B, 0x0C, 0x0D }, bytes);
    }

    [Fact]
    public void Writes_only_its_ten_bytes()
    {
        byte[] bytes = Enumerable.Repeat((byte)0xEE, FrameHeader.Size + 4).ToArray();

        new FrameHeader(7, FrameType.Ping, FrameFlags.None, 0).WriteTo(bytes);

        Assert.All(bytes[FrameHeader.Size..], b => Assert.Equal(0xEE, b));
    }

    [Fact]
    public void Round_trips_the_extreme_stream_ids_and_largest_signed_length()
    {
        var bytes = new byte[FrameHeader.Size];
        var header = new FrameHeader(int.MaxValue, FrameType.GoAway, (FrameFlags)0xFF, uint.MaxValue);

        header.WriteTo(bytes);

        Assert.Equal(header, FrameHeader.ReadFrom(bytes));
    }

    [Theory]
    [InlineData(0x80000000u)]
    [InlineData(0xFFFFFFFFu)]
    public void A_declared_length_beyond_int_max_reads_as_negative(uint declared)
    {
        byte[] bytes = Infrastructure.FrameBytes.Header(declared, (byte)FrameType.Data, 0, 1);

        Assert.Equal(-1, FrameHeader.ReadFrom(bytes).PayloadLength);
    }

    [Theory]
    [InlineData(FrameFlags.None, false)]
    [InlineData(FrameFlags.EndStream, true)]
    [InlineData((FrameFlags)0xFE, false)]
    [InlineData((FrameFlags)0xFF, true)]
    public void EndStream_reads_only_bit_zero(FrameFlags flags, bool expected)
    {
        Assert.Equal(expected, new FrameHeader(0, FrameType.Data, flags, 1).EndStream);
    }
}
