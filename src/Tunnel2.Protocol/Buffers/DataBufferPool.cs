using System.Buffers;
using System.Collections.Concurrent;
using System.Numerics;

namespace Tunnel2.Protocol.Buffers;

/// <summary>
/// The payload buffers of outgoing Data frames: arrays of a power of two from 4 KiB to 256 KiB, kept for reuse up to
/// <see cref="MaxRetainedBytes"/> in all; smaller and larger ones go to <see cref="ArrayPool{T}.Shared"/>. A crowd of
/// streams queues a frame each (up to the queued-data limit, 16 MiB by default), far more than the 32 arrays of a size
/// per core the shared pool keeps, so there nearly every frame was a new array that was collected later, in the storm's
/// first seconds by gen2 collections (docs/benchmarks/2026-11-29-storm-first-seconds.md). Every size here is one the
/// shared pool also accepts, so a buffer given back to the other pool by any path is still a valid return.
/// </summary>
public sealed class DataBufferPool
{
    /// <summary>What the pool keeps at most, over all sizes: twice the default queued-data limit.</summary>
    public const int MaxRetainedBytes = 32 * 1024 * 1024;

    private const int MinShift = 12; // 4 KiB
    private const int MaxShift = 18; // 256 KiB, the default largest frame payload

    private readonly ConcurrentQueue<byte[]>[] _free = CreateClasses();
    private long _retainedBytes;
    private bool _rentedSinceTrim;

    /// <summary>The pool of every stream's outgoing Data frames in the process, trimmed while idle (<see cref="PoolTrim"/>).</summary>
    public static DataBufferPool Shared { get; } = StartTrimmed();

    /// <summary>Bytes kept for reuse right now (tests).</summary>
    public long RetainedBytes => Interlocked.Read(ref _retainedBytes);

    /// <summary>An array of at least <paramref name="minimumLength"/> bytes (a power of two within the pool's sizes).</summary>
    public byte[] Rent(int minimumLength)
    {
        int shift = ShiftFor(minimumLength);
        if (shift < MinShift || shift > MaxShift)
        {
            return ArrayPool<byte>.Shared.Rent(minimumLength);
        }

        if (!_rentedSinceTrim)
        {
            _rentedSinceTrim = true; // written once a period, not on every rent
        }

        if (_free[shift - MinShift].TryDequeue(out byte[]? array))
        {
            Interlocked.Add(ref _retainedBytes, -array.Length);
            return array;
        }

        return GC.AllocateUninitializedArray<byte>(1 << shift);
    }

    /// <summary>Gives an array back, from this pool or from the shared one.</summary>
    public void Return(byte[] array)
    {
        int length = array.Length;
        int shift = BitOperations.Log2((uint)length);
        if (!BitOperations.IsPow2(length) || shift < MinShift || shift > MaxShift)
        {
            ArrayPool<byte>.Shared.Return(array);
            return;
        }

        if (Interlocked.Add(ref _retainedBytes, length) <= MaxRetainedBytes)
        {
            _free[shift - MinShift].Enqueue(array);
            return;
        }

        Interlocked.Add(ref _retainedBytes, -length); // over the cap: left to the collector
    }

    /// <summary>
    /// When nothing was rented since the last call, lets half of the free arrays of each size go (rounded up, so the
    /// last one goes too); otherwise keeps them all and starts a new period. Returns the bytes let go.
    /// </summary>
    public long TrimIfIdle()
    {
        if (_rentedSinceTrim)
        {
            _rentedSinceTrim = false;
            return 0;
        }

        long released = 0;
        foreach (ConcurrentQueue<byte[]> free in _free)
        {
            for (int drop = (free.Count + 1) / 2; drop > 0 && free.TryDequeue(out byte[]? array); drop--)
            {
                Interlocked.Add(ref _retainedBytes, -array.Length);
                released += array.Length;
            }
        }

        return released;
    }

    private static DataBufferPool StartTrimmed()
    {
        PoolTrim.EnsureStarted();
        return new DataBufferPool();
    }

    private static int ShiftFor(int minimumLength) => minimumLength <= 1 ? 0 : BitOperations.Log2((uint)(minimumLength - 1)) + 1;

    private static ConcurrentQueue<byte[]>[] CreateClasses()
    {
        var classes = new ConcurrentQueue<byte[]>[MaxShift - MinShift + 1];
        for (int i = 0; i < classes.Length; i++)
        {
            classes[i] = new ConcurrentQueue<byte[]>();
        }

        return classes;
    }
}
