using System.Buffers;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Multiplexing;

public sealed class PooledBufferWriterTests
{
    [Fact]
    public void Grows_past_its_initial_capacity_and_keeps_what_was_written()
    {
        var writer = new PooledBufferWriter(initialCapacity: 4);
        var expected = new List<byte>();

        for (int i = 0; i < 5000; i++)
        {
            Span<byte> span = writer.GetSpan(1);
            span[0] = (byte)i;
            writer.Advance(1);
            expected.Add((byte)i);
        }

        writer.Write(new byte[] { 1, 2, 3 });
        expected.AddRange([1, 2, 3]);
        byte[] buffer = writer.Detach(out int length);

        Assert.Equal(expected.Count, length);
        Assert.Equal(expected, buffer.AsSpan(0, length).ToArray());
        ArrayPool<byte>.Shared.Return(buffer);
    }

    [Fact]
    public void Honours_the_size_hint()
    {
        var writer = new PooledBufferWriter(initialCapacity: 16);
        writer.Advance(10);

        Assert.True(writer.GetSpan(100_000).Length >= 100_000);
        Assert.True(writer.GetMemory(200_000).Length >= 200_000);
        Assert.Equal(10, writer.WrittenCount);
    }

    [Fact]
    public void Detach_hands_over_the_buffer_and_resets_the_count()
    {
        var writer = new PooledBufferWriter();
        writer.Write("abc"u8);

        byte[] buffer = writer.Detach(out int length);

        Assert.Equal(3, length);
        Assert.Equal("abc"u8.ToArray(), buffer[..3]);
        Assert.Equal(0, writer.WrittenCount);
        ArrayPool<byte>.Shared.Return(buffer);
    }
}
