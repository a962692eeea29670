using System.Buffers;
using System.Runtime.InteropServices;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.LoopKestrel.Transport;

/// <summary>
/// One send of what Kestrel flushed: a single-segment buffer through <see cref="LoopSocket.SendSome(ReadOnlySpan{byte})"/>, several
/// segments in one sendmsg (Tunnel2.Loops gathers two pieces only, so the prototype has its own call).
/// </summary>
internal static unsafe partial class GatherSend
{
    private const int MaxVectors = 16;
    private const int MsgNoSignal = 0x4000, EAgain = 11, EIntr = 4;

    /// <returns>Bytes taken (0 to all; when not all, the socket's OnWritable follows), or -1 when the socket is closed.</returns>
    public static int Send(LoopSocket socket, in ReadOnlySequence<byte> buffer)
    {
        if (buffer.IsSingleSegment)
        {
            return socket.SendSome(buffer.FirstSpan);
        }
        int sent = SendMessage(socket.Fd, buffer);
        if (sent == -EAgain)
        {
            sent = 0;
        }
        else if (sent < 0)
        {
            socket.Close();
            return -1;
        }
        if (sent < buffer.Length)
        {
            socket.NotifyWhenDrained();
        }
        return sent;
    }

    private static int SendMessage(int fd, in ReadOnlySequence<byte> buffer)
    {
        var vectors = stackalloc IoVector[MaxVectors];
        var handles = new MemoryHandle[MaxVectors];
        int count = 0;
        foreach (ReadOnlyMemory<byte> segment in buffer)
        {
            if (count == MaxVectors)
            {
                break;
            }
            if (segment.IsEmpty)
            {
                continue;
            }
            handles[count] = segment.Pin();
            vectors[count] = new IoVector { Base = handles[count].Pointer, Length = (nuint)segment.Length };
            count++;
        }
        try
        {
            var message = new MessageHeader { Vectors = vectors, VectorCount = (nuint)count };
            while (true)
            {
                nint n = sendmsg(fd, &message, MsgNoSignal);
                int errno = n < 0 ? Marshal.GetLastPInvokeError() : 0;
                if (n >= 0 || errno != EIntr)
                {
                    return n >= 0 ? (int)n : -errno;
                }
            }
        }
        finally
        {
            for (int i = 0; i < count; i++)
            {
                handles[i].Dispose();
            }
        }
    }

    [LibraryImport("libc", SetLastError = true)]
    private static partial nint sendmsg(int fd, MessageHeader* message, int flags);

    [StructLayout(LayoutKind.Sequential)]
    private struct IoVector
    {
        public void* Base;
        public nuint Length;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct MessageHeader
    {
        public void* Name;
        public uint NameLength;
        public IoVector* Vectors;
        public nuint VectorCount;
        public void* Control;
        public nuint ControlLength;
        public int Flags;
    }
}
