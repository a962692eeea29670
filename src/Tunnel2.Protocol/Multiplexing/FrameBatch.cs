using System.Buffers;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The loop writer's one batch buffer (pooled, rented at a turn's first frame, given back once the turn's frames are sent,
/// so an idle uplink holds none): small frames are gathered here so that a turn's control frames and small data go out
/// in one send.
/// </summary>
internal sealed class FrameBatch : IBufferWriter<byte>
{
    public const int Capacity = 64 * 1024;

    private byte[]? _buffer;

    public int Length { get; private set; }

    public int Room => Capacity - Length;

    public ReadOnlySpan<byte> Written => _buffer.AsSpan(0, Length);

    public void Advance(int count) => Length += count;

    public Memory<byte> GetMemory(int sizeHint = 0) => Rented().AsMemory(Length);

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        if (sizeHint > Room)
        {
            throw new InvalidOperationException($"The batch has {Room} bytes of room, not {sizeHint}: the writer flushes before it fills.");
        }

        return Rented().AsSpan(Length);
    }

    public void Clear() => Length = 0;

    public void Release()
    {
        if (_buffer is not null)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = null;
        }

        Length = 0;
    }

    private byte[] Rented() => _buffer ??= ArrayPool<byte>.Shared.Rent(Capacity);
}
