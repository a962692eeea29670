using System.Buffers;
using System.Collections.Concurrent;

namespace Tunnel2.TunnelServer.Transport;

/// <summary>
/// The memory pool for Kestrel's connections, with larger blocks than Kestrel's own 4 KiB ones. Kestrel's socket
/// transport receives into one pool block at a time, so with 4 KiB blocks a bulk download arriving on an uplink cost
/// one <c>recv</c> per 4 KiB on the server, and on this machine class a syscall costs more than the bytes it moves
/// (docs/benchmarks/2026-11-23-performance.md, "Bulk download"). Idle connections hold no block (Kestrel waits for
/// data before it rents one); up to <see cref="MaxRetainedBlocks"/> returned blocks are kept for reuse, the rest are
/// left to the GC so a burst does not pin its peak forever.
/// </summary>
internal sealed class ReceiveBlockMemoryPool : MemoryPool<byte>
{
    public const int BlockSize = 32 * 1024;
    public const int MaxRetainedBlocks = 256;

    private readonly ConcurrentQueue<Block> _free = new();
    private int _retained;
    private volatile bool _disposed;

    public override int MaxBufferSize => BlockSize;

    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(minBufferSize, BlockSize);
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_free.TryDequeue(out Block? block))
        {
            Interlocked.Decrement(ref _retained);
            block.Rented();
            return block;
        }

        return new Block(this, GC.AllocateUninitializedArray<byte>(BlockSize, pinned: true));
    }

    protected override void Dispose(bool disposing)
    {
        _disposed = true;
        _free.Clear();
    }

    private void Return(Block block)
    {
        if (_disposed || Interlocked.Increment(ref _retained) > MaxRetainedBlocks)
        {
            Interlocked.Decrement(ref _retained);
            return;
        }

        _free.Enqueue(block);
    }

    private sealed class Block(ReceiveBlockMemoryPool pool, byte[] array) : IMemoryOwner<byte>
    {
        private int _returned;

        public Memory<byte> Memory => array;

        public void Rented() => Volatile.Write(ref _returned, 0);

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _returned, 1) == 0)
            {
                pool.Return(this);
            }
        }
    }
}
