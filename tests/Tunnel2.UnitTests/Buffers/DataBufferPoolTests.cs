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
        var pool = new DataBufferPool(); // its own, so tests using the shared one at the same time cannot drain or fill it
        var rented = new byte[Frames][];
        RentAndReturn(pool, rented, Bytes); // warm-up: the arrays and the free queues' segments
        RentAndReturn(pool, rented, Bytes);

        long before = GC.GetAllocatedBytesForCurrentThread();
        RentAndReturn(pool, rented, Bytes);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        // With the shared array pool nearly all 1,000 would be new arrays: 16 MB.
        Assert.True(allocated < 64 * 1024, $"{allocated} bytes allocated for {Frames} frames of {Bytes} bytes held at once");
        Assert.Equal(Frames * Bytes, pool.RetainedBytes);
    }

    [Theory]
    [InlineData(1, 1)]
    [InlineData(4096, 4096)]
    [InlineData(4097, 8192)]
    [InlineData(16 * 1024, 16 * 1024)]
    [InlineData(256 * 1024, 256 * 1024)]
    public void Gives_a_power_of_two_the_shared_pool_would_also_take_back(int asked, int atLeast)
    {
        byte[] array = new DataBufferPool().Rent(asked);

        Assert.True(array.Length >= atLeast && array.Length >= asked);
        Assert.Equal(0, array.Length & (array.Length - 1));
        ArrayPool<byte>.Shared.Return(array); // does not throw: a valid size for the shared pool
    }

    [Fact]
    public void Takes_back_arrays_of_the_shared_pool_and_of_other_sizes()
    {
        var pool = new DataBufferPool();
        pool.Return(ArrayPool<byte>.Shared.Rent(16 * 1024));
        pool.Return(ArrayPool<byte>.Shared.Rent(100));
        pool.Return(ArrayPool<byte>.Shared.Rent(1024 * 1024));

        Assert.Equal(16 * 1024, pool.RetainedBytes); // only the size within the pool's range is kept
    }

    [Fact]
    public void Arrays_given_back_beyond_the_retained_bytes_are_left_to_the_collector()
    {
        var pool = new DataBufferPool();
        const int Bytes = 256 * 1024;
        byte[][] rented = Enumerable.Range(0, DataBufferPool.MaxRetainedBytes / Bytes + 4).Select(_ => pool.Rent(Bytes)).ToArray();

        foreach (byte[] array in rented)
        {
            pool.Return(array);
        }

        Assert.Equal(DataBufferPool.MaxRetainedBytes, pool.RetainedBytes);
    }

    [Fact]
    public void An_idle_pool_gives_back_half_of_what_it_keeps_at_each_trim_and_a_pool_in_use_keeps_all()
    {
        var pool = new DataBufferPool();
        byte[][] rented = new byte[64][];
        RentAndReturn(pool, rented, 16 * 1024);
        Assert.Equal(64 * 16 * 1024, pool.RetainedBytes);

        Assert.Equal(0, pool.TrimIfIdle()); // rented from since the last look: kept, a new period starts
        Assert.Equal(64 * 16 * 1024, pool.RetainedBytes);

        Assert.Equal(32 * 16 * 1024, pool.TrimIfIdle()); // what it let go: what the trim weighs against a collection
        Assert.Equal(32 * 16 * 1024, pool.RetainedBytes);

        for (int i = 0; i < 6; i++)
        {
            pool.TrimIfIdle();
        }

        Assert.Equal(0, pool.RetainedBytes); // 32, 16, 8, 4, 2, 1: a minute of idle periods empties it
    }

    private static void RentAndReturn(DataBufferPool pool, byte[][] rented, int bytes)
    {
        for (int i = 0; i < rented.Length; i++)
        {
            rented[i] = pool.Rent(bytes);
        }

        foreach (byte[] array in rented)
        {
            pool.Return(array);
        }
    }
}
