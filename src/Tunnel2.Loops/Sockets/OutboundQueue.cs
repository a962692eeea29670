using System.Buffers;

namespace Tunnel2.Loops.Sockets;

/// <summary>
/// What a socket could not take yet, in pooled segments (small messages share a segment). Empty, it holds no buffer;
/// buffers go back to the pool as they drain.
/// </summary>
public sealed class OutboundQueue
{
    private const int SegmentSize = 16 * 1024;

    private struct Segment
    {
        public byte[] Buffer;
        public int Start;
        public int End;
    }

    private readonly List<Segment> _segments = [];
    private int _head;

    public int Count { get; private set; }

    public ReadOnlySpan<byte> Head => _head < _segments.Count
        ? _segments[_head].Buffer.AsSpan(_segments[_head].Start, _segments[_head].End - _segments[_head].Start)
        : default;

    public void Append(ReadOnlySpan<byte> data)
    {
        Count += data.Length;
        if (_segments.Count > _head)
        {
            Segment last = _segments[^1];
            int room = last.Buffer.Length - last.End;
            int take = Math.Min(room, data.Length);
            data[..take].CopyTo(last.Buffer.AsSpan(last.End));
            last.End += take;
            _segments[^1] = last;
            data = data[take..];
        }
        if (data.Length > 0)
        {
            byte[] buffer = ArrayPool<byte>.Shared.Rent(Math.Max(data.Length, SegmentSize));
            data.CopyTo(buffer);
            _segments.Add(new Segment { Buffer = buffer, Start = 0, End = data.Length });
        }
    }

    public void Consume(int bytes)
    {
        Count -= bytes;
        while (bytes > 0)
        {
            Segment head = _segments[_head];
            int take = Math.Min(bytes, head.End - head.Start);
            head.Start += take;
            bytes -= take;
            if (head.Start < head.End)
            {
                _segments[_head] = head;
                return;
            }
            ArrayPool<byte>.Shared.Return(head.Buffer);
            _head++;
        }
        if (_head == _segments.Count)
        {
            _segments.Clear();
            _head = 0;
        }
    }

    public void Clear()
    {
        for (int i = _head; i < _segments.Count; i++)
        {
            ArrayPool<byte>.Shared.Return(_segments[i].Buffer);
        }
        _segments.Clear();
        _head = 0;
        Count = 0;
    }
}
