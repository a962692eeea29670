using System.Buffers;
using System.Collections.Concurrent;

namespace Tunnel2.Protocol.Buffers;

/// <summary>
/// The blocks of the streams' inbound pipes: 4 KiB arrays kept for reuse up to <see cref="MaxRetainedBytes"/> in all.
/// The pipes' default pool, <see cref="ArrayPool{T}.Shared"/>, keeps 32 arrays of a size per core: a crowd of streams,
/// each holding up to its window of received body until its destination takes it, rents thousands, so nearly every
/// block was a new array, promoted while it waited and collected later (a gen2 collection several times in a storm's
/// first seconds, docs/benchmarks/2026-11-29-storm-first-seconds.md). Here the blocks are objects that own their array
/// and come back whole, so a warmed pool allocates nothing, as Kestrel's own block pool does.
/// </summary>
internal sealed class InboundBlockPool : MemoryPool<byte>
{
    /// <summary>The size of every block: the inbound pipes' minimum segment size, which is what they ask for.</summary>
    public const int BlockSize = 4096;

    /// <summary>
    /// Blocks beyond this are left to the GC when given back: twice the default connection window, what one crowded
    /// uplink may hold received at once plus room for a second.
    /// </summary>
    public const int MaxRetainedBytes = 32 * 1024 * 1024;

    private const int MaxRetainedBlocks = MaxRetainedBytes / BlockSize;

    private readonly ConcurrentQueue<Block> _free = new();
    private int _freeCount;
    private bool _rentedSinceTrim;

    /// <summary>The pool of every inbound pipe in the process, trimmed while idle (<see cref="PoolTrim"/>).</summary>
    public static new InboundBlockPool Shared { get; } = StartTrimmed();

    /// <summary>Blocks kept for reuse right now (tests).</summary>
    public int FreeBlocks => Volatile.Read(ref _freeCount);

    public override int MaxBufferSize => BlockSize;

    /// <exception cref="ArgumentOutOfRangeException">More than a block was asked for (a pipe asks the shared array pool for that itself).</exception>
    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(minBufferSize, BlockSize);
        if (!_rentedSinceTrim)
        {
            _rentedSinceTrim = true; // written once a period, not on every rent
        }

        if (_free.TryDequeue(out Block? block))
        {
            Interlocked.Decrement(ref _freeCount);
            return block;
        }

        return new Block(this);
    }

    /// <summary>
    /// When nothing was rented since the last call, lets half of the free blocks go (rounded up, so the last one goes
    /// too); otherwise keeps them all and starts a new period. Returns the bytes let go.
    /// </summary>
    public long TrimIfIdle()
    {
        if (_rentedSinceTrim)
        {
            _rentedSinceTrim = false;
            return 0;
        }

        long released = 0;
        for (int drop = (_free.Count + 1) / 2; drop > 0 && _free.TryDequeue(out _); drop--)
        {
            Interlocked.Decrement(ref _freeCount);
            released += BlockSize;
        }

        return released;
    }

    protected override void Dispose(bool disposing)
    {
        // Process-wide: blocks outlive any one pipe.
    }

    private static InboundBlockPool StartTrimmed()
    {
        PoolTrim.EnsureStarted();
        return new InboundBlockPool();
    }

    private void Return(Block block)
    {
        if (Interlocked.Increment(ref _freeCount) <= MaxRetainedBlocks)
        {
            _free.Enqueue(block);
            return;
        }

        Interlocked.Decrement(ref _freeCount);
    }

    /// <summary>A block and its array, given back whole when its pipe segment is done with it (once: pipes dispose each owner once).</summary>
    private sealed class Block(InboundBlockPool pool) : IMemoryOwner<byte>
    {
        private readonly byte[] _array = GC.AllocateUninitializedArray<byte>(BlockSize);

        public Memory<byte> Memory => _array;

        public void Dispose() => pool.Return(this);
    }
}
