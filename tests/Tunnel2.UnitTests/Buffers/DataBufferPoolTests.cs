using System.Buffers;
using Tunnel2.Protocol.Buffers;

namespace Tunnel2.UnitTests.Buffers;

public sealed class DataBufferPoolTests
{
    [Fact]
    public void A_crowds_worth_of_frame_buffers_is_reused_rather_than_allocated_again()
    {
        // 1,000 streams with a 16 KiB frame each queued at once: the shared array pool keeps 32 per size per core.
        const int Frames = 1000;
        const int Bytes = 16 * 1024;
        var rented = new byte[Frames][];
        RentAndReturn(rented, Bytes); // warm-up: the arrays and the free queues' segments
        RentAndReturn(rented, Bytes);

        long before = GC.GetAllocatedBytesForCurrentThread();
        RentAndReturn(rented, Bytes);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        // Other tests share the process-wide pool and may take some of these arrays meanwhile: a few may be new, not most.
        Assert.True(allocated < Frames / 10 * Bytes, $"{allocated} bytes allocated for {Frames} frames of {Bytes} bytes held at once");
    }

    [Theory]
    [InlineData(1, 1)]
    [InlineData(4096, 4096)]
    [InlineData(4097, 8192)]
    [InlineData(16 * 1024, 16 * 1024)]
    [InlineData(256 * 1024, 256 * 1024)]
    public void Gives_a_power_of_two_the_shared_pool_would_also_take_back(int asked, int atLeast)
    {
        byte[] array = DataBufferPool.Rent(asked);

        Assert.True(array.Length >= atLeast && array.Length >= asked);
        Assert.Equal(0, array.Length & (array.Length - 1));
        ArrayPool<byte>.Shared.Return(array); // does not throw: a valid size for the shared pool
    }

    [Fact]
    public void Takes_back_arrays_of_the_shared_pool_and_of_other_sizes()
    {
        DataBufferPool.Return(ArrayPool<byte>.Shared.Rent(16 * 1024));
        DataBufferPool.Return(ArrayPool<byte>.Shared.Rent(100));
        DataBufferPool.Return(ArrayPool<byte>.Shared.Rent(1024 * 1024));

        Assert.InRange(DataBufferPool.RetainedBytes, 0, DataBufferPool.MaxRetainedBytes);
    }

    private static void RentAndReturn(byte[][] rented, int bytes)
    {
        for (int i = 0; i < rented.Length; i++)
        {
            rented[i] = DataBufferPool.Rent(bytes);
        }

        foreach (byte[] array in rented)
        {
            DataBufferPool.Return(array);
        }
    }
}
