using System.Buffers;
using System.Buffers.Binary;
using Tunnel2.Protocol.Buffers;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// A frame waiting for the uplink's writer loop. Either it owns a pooled payload buffer (heads, data), returned to the
/// pool once written, or its small fixed payload travels inline in <see cref="_control"/>.
/// </summary>
internal readonly struct OutboundFrame
{
    private readonly byte[]? _pooled;
    private readonly int _length;
    private readonly ulong _control;

    private OutboundFrame(FrameType type, FrameFlags flags, uint streamId, byte[]? pooled, int length, ulong control, bool holdsBudget = false)
    {
        Type = type;
        Flags = flags;
        StreamId = streamId;
        _pooled = pooled;
        _length = length;
        _control = control;
        HoldsQueuedDataBudget = holdsBudget;
    }

    public FrameType Type { get; }

    public FrameFlags Flags { get; }

    public uint StreamId { get; }

    /// <summary>A Data frame whose payload was reserved in the uplink's <see cref="QueuedDataBudget"/>, given back when the writer takes or drops it.</summary>
    public bool HoldsQueuedDataBudget { get; }

    public static OutboundFrame WithPooledPayload(FrameType type, FrameFlags flags, uint streamId, byte[]? pooled, int length, bool holdsQueuedDataBudget = false) =>
        new(type, flags, streamId, pooled, length, 0, holdsQueuedDataBudget);

    public static OutboundFrame Reset(uint streamId, ProtocolErrorCode code) =>
        new(FrameType.Reset, FrameFlags.None, streamId, null, 4, (uint)code);

    public static OutboundFrame WindowUpdate(uint streamId, int increment) =>
        new(FrameType.WindowUpdate, FrameFlags.None, streamId, null, 4, (uint)increment);

    public static OutboundFrame Ping(ulong opaque) => new(FrameType.Ping, FrameFlags.None, 0, null, 8, opaque);

    public static OutboundFrame Pong(ulong opaque) => new(FrameType.Pong, FrameFlags.None, 0, null, 8, opaque);

    public static OutboundFrame GoAway(uint lastStreamId, ProtocolErrorCode code) =>
        new(FrameType.GoAway, FrameFlags.None, 0, null, 8, ((ulong)lastStreamId << 32) | (uint)code);

    public static OutboundFrame Health(bool ready) => new(FrameType.Health, FrameFlags.None, 0, null, 4, ready ? 1u : 0u);

    public int TotalLength => FrameHeader.Size + _length;

    public int PayloadLength => _length;

    /// <summary>Writes header and payload, then gives the pooled payload back.</summary>
    public void WriteTo(IBufferWriter<byte> output)
    {
        Span<byte> span = output.GetSpan(FrameHeader.Size + (_pooled is null ? _length : 0));
        new FrameHeader(_length, Type, Flags, StreamId).WriteTo(span);
        if (_pooled is not null)
        {
            output.Advance(FrameHeader.Size);
            output.Write(_pooled.AsSpan(0, _length));
            DataBufferPool.Shared.Return(_pooled);
            return;
        }

        Span<byte> payload = span.Slice(FrameHeader.Size, _length);
        if (_length == 4)
        {
            BinaryPrimitives.WriteUInt32BigEndian(payload, (uint)_control);
        }
        else if (_length == 8)
        {
            BinaryPrimitives.WriteUInt64BigEndian(payload, _control);
        }

        output.Advance(FrameHeader.Size + _length);
    }

    /// <summary>Whether the payload is a pooled buffer of at least <paramref name="bytes"/> (which may go out without a copy).</summary>
    public bool HasPooledPayloadOf(int bytes) => _pooled is not null && _length >= bytes;

    /// <summary>The pooled payload, for a frame whose header went out with <see cref="WriteHeaderTo"/>; the caller returns it with <see cref="ReturnBuffer"/>.</summary>
    public ReadOnlyMemory<byte> PooledPayload => _pooled.AsMemory(0, _length);

    /// <summary>Writes only the header of a frame with a pooled payload; the payload follows it on the connection.</summary>
    public void WriteHeaderTo(IBufferWriter<byte> output)
    {
        new FrameHeader(_length, Type, Flags, StreamId).WriteTo(output.GetSpan(FrameHeader.Size));
        output.Advance(FrameHeader.Size);
    }

    public void ReturnBuffer()
    {
        if (_pooled is not null)
        {
            DataBufferPool.Shared.Return(_pooled);
        }
    }
}
