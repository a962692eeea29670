using System.Buffers;
using System.IO.Pipelines;
using Tunnel2.Protocol.Buffers;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.UnitTests.Buffers;

public sealed class InboundBlockPoolTests
{
    private const int Streams = 300;
    private const int BodyBytes = 16 * 1024;

    [Fact]
    public void The_streams_inbound_pipes_take_their_blocks_from_the_shared_block_pool()
    {
        Assert.Same(InboundBlockPool.Shared, UplinkStream.InboundPipeOptions.Pool);
        Assert.Equal(InboundBlockPool.BlockSize, UplinkStream.InboundPipeOptions.MinimumSegmentSize);
    }

    [Fact]
    public async Task A_crowd_of_pipes_each_holding_a_window_of_body_allocates_nothing_once_the_pool_is_warm()
    {
        // A pool of its own, so other tests renting from the shared one at the same time cannot drain it under this one.
        var pool = new InboundBlockPool();
        var options = new PipeOptions(pool: pool, pauseWriterThreshold: 0, resumeWriterThreshold: 0,
            minimumSegmentSize: InboundBlockPool.BlockSize, useSynchronizationContext: false);
        Pipe[] pipes = Enumerable.Range(0, Streams).Select(_ => new Pipe(options)).ToArray();
        byte[] body = new byte[BodyBytes];

        // Warm-up: the blocks, each pipe's own segment objects and the free queue's segments.
        await FillAndDrainAsync(pipes, body);
        await FillAndDrainAsync(pipes, body);
        long before = GC.GetAllocatedBytesForCurrentThread();
        long read = await FillAndDrainAsync(pipes, body) + await FillAndDrainAsync(pipes, body);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(2L * Streams * BodyBytes, read);

        // With the shared array pool (32 arrays of a size per core) each round allocated 4.7 MB (measured).
        Assert.True(allocated < 64 * 1024, $"{allocated} bytes allocated over two rounds of {Streams} × {BodyBytes} bytes held at once");
        Assert.Equal(Streams * BodyBytes / InboundBlockPool.BlockSize, pool.FreeBlocks);
    }

    [Fact]
    public void Blocks_given_back_beyond_the_retained_bytes_are_left_to_the_collector()
    {
        var pool = new InboundBlockPool();
        int retained = InboundBlockPool.MaxRetainedBytes / InboundBlockPool.BlockSize;
        IMemoryOwner<byte>[] rented = Enumerable.Range(0, retained + 10).Select(_ => pool.Rent(InboundBlockPool.BlockSize)).ToArray();
        Assert.All(rented, owner => Assert.Equal(InboundBlockPool.BlockSize, owner.Memory.Length));

        foreach (IMemoryOwner<byte> owner in rented)
        {
            owner.Dispose();
        }

        Assert.Equal(retained, pool.FreeBlocks);
    }

    [Fact]
    public void A_block_comes_back_to_the_next_renter()
    {
        var pool = new InboundBlockPool();
        IMemoryOwner<byte> first = pool.Rent();
        Memory<byte> memory = first.Memory;
        first.Dispose();

        using IMemoryOwner<byte> second = pool.Rent();

        Assert.Same(first, second);
        Assert.True(memory.Span == second.Memory.Span);
        Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent(InboundBlockPool.BlockSize + 1));
    }

    /// <returns>The bytes read back (asserted by the caller: an assertion in the loop would allocate in the measured span).</returns>
    [Fact]
    public void An_idle_block_pool_gives_back_half_of_its_free_blocks_at_each_trim_and_one_in_use_keeps_all()
    {
        var pool = new InboundBlockPool();
        IMemoryOwner<byte>[] blocks = Enumerable.Range(0, 10).Select(_ => pool.Rent()).ToArray();
        foreach (IMemoryOwner<byte> block in blocks)
        {
            block.Dispose();
        }

        Assert.Equal(0, pool.TrimIfIdle()); // rented from since the last look: kept
        Assert.Equal(10, pool.FreeBlocks);

        Assert.Equal(5 * InboundBlockPool.BlockSize, pool.TrimIfIdle()); // what it let go
        Assert.Equal(5, pool.FreeBlocks);

        using (pool.Rent())
        {
        }

        pool.TrimIfIdle(); // in use again: kept
        Assert.Equal(5, pool.FreeBlocks);

        for (int i = 0; i < 4; i++)
        {
            pool.TrimIfIdle();
        }

        Assert.Equal(0, pool.FreeBlocks); // 5, 2, 1, 0
    }

    private static async Task<long> FillAndDrainAsync(Pipe[] pipes, byte[] body)
    {
        long read = 0;
        foreach (Pipe pipe in pipes)
        {
            pipe.Writer.Write(body);
            await pipe.Writer.FlushAsync();
        }

        foreach (Pipe pipe in pipes)
        {
            ReadResult result = await pipe.Reader.ReadAsync();
            read += result.Buffer.Length;
            pipe.Reader.AdvanceTo(result.Buffer.End);
        }

        return read;
    }
}
