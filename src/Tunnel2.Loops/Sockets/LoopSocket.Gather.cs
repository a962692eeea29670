using System.Buffers;
using System.Runtime.CompilerServices;
using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

/// <summary>A gather send of a pipe's buffered sequence: its segments in one sendmsg, queued nowhere.</summary>
public sealed unsafe partial class LoopSocket
{
    /// <summary>At most this many segments per sendmsg; the rest goes in the next call (the owner loops while bytes remain).</summary>
    private const int MaxGatherVectors = 16;

    /// <summary>Like <see cref="SendSome(ReadOnlySpan{byte})"/> for a sequence (a pipe's segments): what the kernel takes
    /// now, with no copy and nothing queued. When not all was taken, OnWritable follows once the socket can take more.</summary>
    /// <returns>Bytes taken (0 to all), or -1 when the socket has failed and is closed (<see cref="LastError"/>).</returns>
    public int SendSome(in ReadOnlySequence<byte> data)
    {
        if (data.IsSingleSegment)
        {
            return SendSome(data.FirstSpan);
        }
        if (IsClosed || _shutdownRequested)
        {
            return -1;
        }
        int sent = 0;
        if (_queue.Count == 0 && !_connecting)
        {
            sent = SendGathered(data);
            if (sent == -LibC.EAgain)
            {
                sent = 0;
            }
            else if (sent < 0)
            {
                Fail(-sent);
                return -1;
            }
        }
        if (sent < data.Length && !_wantWritable)
        {
            _wantWritable = true;
            UpdateInterest();
        }
        return sent;
    }

    private int SendGathered(in ReadOnlySequence<byte> data)
    {
        IoVector* vectors = stackalloc IoVector[MaxGatherVectors];
        var pins = new GatherPins();
        int count = 0;
        try
        {
            foreach (ReadOnlyMemory<byte> segment in data)
            {
                if (count == MaxGatherVectors)
                {
                    break;
                }
                if (segment.IsEmpty)
                {
                    continue;
                }
                pins[count] = segment.Pin();
                vectors[count] = new IoVector { Base = (byte*)pins[count].Pointer, Length = (nuint)segment.Length };
                count++;
            }
            return SocketCalls.Send(Fd, vectors, count);
        }
        finally
        {
            for (int i = 0; i < count; i++)
            {
                pins[i].Dispose();
            }
        }
    }

    /// <summary>The pins of one gather send, on the stack (a pinned pool's segments pin for free).</summary>
    [InlineArray(MaxGatherVectors)]
    private struct GatherPins
    {
        private MemoryHandle _first;
    }
}
