using System.Buffers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Heads;

/// <summary>The LEB128 lengths of the head encoding (docs/protocol.md §3).</summary>
public sealed class VarUIntTests
{
    public static TheoryData<uint, string> Encodings => new()
    {
        { 0u, "00" },
        { 1u, "01" },
        { 127u, "7F" },
        { 128u, "8001" },
        { 300u, "AC02" },
        { 16_383u, "FF7F" },
        { 16_384u, "808001" },
        { 1u << 21, "80808001" },
        { (1u << 28) - 1, "FFFFFF7F" },
        { 1u << 28, "8080808001" },
        { 0xF0000000u, "808080800F" },
        { uint.MaxValue, "FFFFFFFF0F" },
    };

    [Theory]
    [MemberData(nameof(Encodings))]
    public void Writes_the_expected_bytes(uint value, string hex)
    {
        var writer = new ArrayBufferWriter<byte>();

        HeadCodec.WriteVarUInt(writer, value);

        Assert.Equal(hex, FrameBytes.Hex(writer.WrittenSpan));
    }

    [Theory]
    [MemberData(nameof(Encodings))]
    public void Reads_back_what_it_wrote_and_stops_after_it(uint value, string hex)
    {
        byte[] bytes = FrameBytes.Concat(Convert.FromHexString(hex), [0xAB]);

        (uint read, long consumed) = Read(new ReadOnlySequence<byte>(bytes));

        Assert.Equal(value, read);
        Assert.Equal(hex.Length / 2, consumed);
    }

    [Theory]
    [MemberData(nameof(Encodings))]
    public void Reads_the_same_from_one_byte_segments(uint value, string hex)
    {
        (uint read, _) = Read(Sequences.Chunked(Convert.FromHexString(hex), 1));

        Assert.Equal(value, read);
    }

    [Fact]
    public void Accepts_a_non_minimal_encoding_within_five_bytes()
    {
        (uint read, long consumed) = Read(new ReadOnlySequence<byte>(new byte[] { 0x80, 0x80, 0x00 }));

        Assert.Equal(0u, read);
        Assert.Equal(3, consumed);
    }

    [Theory]
    [InlineData("808080808000")] // six bytes: overlong
    [InlineData("8080808080808001")]
    [InlineData("FFFFFFFF10")] // fifth byte carries bits above 2^32
    [InlineData("FFFFFFFF1F")]
    [InlineData("FFFFFFFF8F")] // fifth byte asks for a sixth
    [InlineData("FFFFFFFFFF01")]
    public void Rejects_values_that_do_not_fit_in_32_bits(string hex)
    {
        byte[] bytes = Convert.FromHexString(hex);

        Assert.Throws<ProtocolViolationException>(() => Read(new ReadOnlySequence<byte>(bytes)));
    }

    [Theory]
    [InlineData("")]
    [InlineData("80")]
    [InlineData("FFFF")]
    [InlineData("FFFFFFFF")]
    public void Rejects_a_truncated_value(string hex)
    {
        byte[] bytes = Convert.FromHexString(hex);

        Assert.Throws<ProtocolViolationException>(() => Read(new ReadOnlySequence<byte>(bytes)));
    }

    [Fact]
    public void Every_value_around_each_seven_bit_boundary_round_trips()
    {
        foreach (int bits in new[] { 7, 14, 21, 28 })
        {
            for (long delta = -2; delta <= 2; delta++)
            {
                uint value = (uint)((1L << bits) + delta);
                var writer = new ArrayBufferWriter<byte>();
                HeadCodec.WriteVarUInt(writer, value);

                (uint read, long consumed) = Read(new ReadOnlySequence<byte>(writer.WrittenMemory));

                Assert.Equal(value, read);
                Assert.Equal(writer.WrittenCount, consumed);
                Assert.Equal((bits / 7) + (delta >= 0 ? 1 : 0), writer.WrittenCount);
            }
        }
    }

    private static (uint Value, long Consumed) Read(ReadOnlySequence<byte> bytes)
    {
        var reader = new SequenceReader<byte>(bytes);
        uint value = HeadCodec.ReadVarUInt(ref reader);
        return (value, reader.Consumed);
    }
}
