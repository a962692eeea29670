using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

/// <summary>
/// Writes numbered frames (an 8-byte header: index and length, then a payload of varying size) to the one connection it
/// accepts, each with one gather send, stopping at Full and going on at OnWritable, then half-closes. <see cref="Expected"/>
/// is the byte stream a reader must see.
/// </summary>
internal sealed class FramePump(LoopHarness harness, int frames, int window) : ILoopListenerHandler, ILoopSocketHandler
{
    public const int MaxPayload = 40_000;

    private readonly byte[] _header = new byte[8];
    private readonly byte[] _payload = Pattern(MaxPayload);
    private int _next;

    public int Port { get; private set; }

    public LoopSocket? Socket { get; private set; }

    public int FullCount { get; private set; }

    public int MaxQueued { get; private set; }

    public int Sent => _next;

    public List<SendStatus> Unexpected { get; } = [];

    public static async Task<FramePump> StartAsync(LoopHarness harness, int frames, int window)
    {
        var pump = new FramePump(harness, frames, window);
        Socket listening = LoopHarness.Listening();
        pump.Port = ((IPEndPoint)listening.LocalEndPoint!).Port;
        await harness.OnLoopAsync(() => new LoopListener(harness.Loop, listening, pump));
        return pump;
    }

    public static int PayloadLength(int index) => index * 7919 % MaxPayload;

    public static byte[] Expected(int frames)
    {
        using var stream = new MemoryStream();
        byte[] payload = Pattern(MaxPayload), header = new byte[8];
        for (int i = 0; i < frames; i++)
        {
            WriteHeader(header, i);
            stream.Write(header);
            stream.Write(payload, 0, PayloadLength(i));
        }
        return stream.ToArray();
    }

    public void OnAccepted(LoopListener listener, int fd)
    {
        Socket = LoopSocket.Adopt(harness.Loop, fd, this, window);
        Pump(Socket);
    }

    public void OnReadable(LoopSocket socket)
    {
        while (socket.Receive(out _).Status == ReceiveStatus.Data)
        {
        }
    }

    public void OnWritable(LoopSocket socket) => Pump(socket);

    public void OnClosed(LoopSocket socket, LoopError reason) => Unexpected.Add(SendStatus.Closed);

    private void Pump(LoopSocket socket)
    {
        while (_next < frames)
        {
            WriteHeader(_header, _next);
            SendStatus status = socket.Send(_header, _payload.AsSpan(0, PayloadLength(_next)));
            if (status is SendStatus.Refused or SendStatus.Closed)
            {
                Unexpected.Add(status);
                return;
            }
            _next++;
            MaxQueued = Math.Max(MaxQueued, socket.QueuedBytes);
            if (status == SendStatus.Full)
            {
                FullCount++;
                return;
            }
        }
        socket.ShutdownWrite();
    }

    private static void WriteHeader(byte[] header, int index)
    {
        BinaryPrimitives.WriteInt32BigEndian(header, index);
        BinaryPrimitives.WriteInt32BigEndian(header.AsSpan(4), PayloadLength(index));
    }

    private static byte[] Pattern(int length)
    {
        byte[] pattern = new byte[length];
        for (int i = 0; i < length; i++)
        {
            pattern[i] = (byte)(i % 251);
        }
        return pattern;
    }
}
