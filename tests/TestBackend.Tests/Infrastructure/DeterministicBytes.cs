using System.Buffers.Binary;

namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>
/// A reproducible byte stream of any length that is never held in memory: each 65,521-byte block
/// (a prime length, so it never lines up with power-of-two buffers) is a fixed random block stamped
/// with its index, so a chunk duplicated, dropped or moved anywhere changes the bytes.
/// </summary>
internal static class DeterministicBytes
{
    private const int BlockSize = 65_521;
    private const int StampSize = sizeof(long);

    private static readonly byte[] Block = CreateBlock();

    /// <summary>Writes the bytes found at <paramref name="offset"/> of the stream into <paramref name="destination"/>.</summary>
    public static void Fill(long offset, Span<byte> destination)
    {
        Span<byte> stamp = stackalloc byte[StampSize];
        while (!destination.IsEmpty)
        {
            var blockIndex = offset / BlockSize;
            var within = (int)(offset % BlockSize);
            var take = Math.Min(destination.Length, BlockSize - within);
            Block.AsSpan(within, take).CopyTo(destination);
            if (within < StampSize)
            {
                BinaryPrimitives.WriteInt64LittleEndian(stamp, blockIndex);
                var stamped = Math.Min(StampSize - within, take);
                stamp.Slice(within, stamped).CopyTo(destination);
            }

            destination = destination[take..];
            offset += take;
        }
    }

    private static byte[] CreateBlock()
    {
        var block = new byte[BlockSize];
        new Random(20261122).NextBytes(block);
        return block;
    }
}
