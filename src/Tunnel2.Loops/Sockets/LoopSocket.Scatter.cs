using System.Buffers;
using System.Runtime.CompilerServices;
using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

/// <summary>A scatter read: several buffers (a frame's payload each) filled in order by one readv.</summary>
public sealed unsafe partial class LoopSocket
{
    /// <summary>At most this many buffers per read (four 256 KiB frames: a 1 MiB read).</summary>
    public const int MaxScatterVectors = 4;

    /// <summary>
    /// Like <see cref="Receive(Span{byte})"/>, into <paramref name="into"/>'s buffers in order (at most
    /// <see cref="MaxScatterVectors"/>; the rest are left alone): one syscall where a read per buffer would take several,
    /// so a bulk body costs one read per megabyte rather than one per frame.
    /// </summary>
    public ReceiveResult Receive(ReadOnlySpan<Memory<byte>> into)
    {
        if (IsClosed)
        {
            return new ReceiveResult(ReceiveStatus.Closed, 0, LastError);
        }
        return ReceivedResult(ReceiveScattered(into));
    }

    private int ReceiveScattered(ReadOnlySpan<Memory<byte>> into)
    {
        IoVector* vectors = stackalloc IoVector[MaxScatterVectors];
        var pins = new ScatterPins();
        int count = 0;
        try
        {
            foreach (Memory<byte> buffer in into)
            {
                if (count == MaxScatterVectors)
                {
                    break;
                }
                if (buffer.IsEmpty)
                {
                    continue;
                }
                pins[count] = buffer.Pin();
                vectors[count] = new IoVector { Base = (byte*)pins[count].Pointer, Length = (nuint)buffer.Length };
                count++;
            }
            if (count == 0)
            {
                throw new ArgumentException("A scatter read needs at least one buffer with room.", nameof(into));
            }
            return SocketCalls.Receive(Fd, vectors, count);
        }
        finally
        {
            for (int i = 0; i < count; i++)
            {
                pins[i].Dispose();
            }
        }
    }

    /// <summary>The pins of one scatter read, on the stack.</summary>
    [InlineArray(MaxScatterVectors)]
    private struct ScatterPins
    {
        private MemoryHandle _first;
    }
}
