using System.Buffers;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>An <see cref="IBufferWriter{T}"/> over one array rented from the shared pool, handed on whole when done.</summary>
internal sealed class PooledBufferWriter : IBufferWriter<byte>
{
    private byte[] _buffer;
    private int _written;

    public PooledBufferWriter(int initialCapacity = 1024)
    {
        _buffer = ArrayPool<byte>.Shared.Rent(initialCapacity);
    }

    public int WrittenCount => _written;

    public void Advance(int count) => _written += count;

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    /// <summary>Gives the rented array away; the caller returns it to <see cref="ArrayPool{T}.Shared"/>.</summary>
    public byte[] Detach(out int length)
    {
        byte[] buffer = _buffer;
        length = _written;
        _buffer = [];
        _written = 0;
        return buffer;
    }

    private void Ensure(int sizeHint)
    {
        int needed = Math.Max(sizeHint, 1);
        if (_buffer.Length - _written >= needed)
        {
            return;
        }

        byte[] larger = ArrayPool<byte>.Shared.Rent(Math.Max(_buffer.Length * 2, _written + needed));
        _buffer.AsSpan(0, _written).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = larger;
    }
}
