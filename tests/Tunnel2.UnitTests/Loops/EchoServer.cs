using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

/// <summary>An echo server on a loop, written the way a relay uses the library: read into the loop's buffer, send at
/// once, pause reading while the outbound queue is full, end with a FIN after the peer's.</summary>
internal sealed class EchoServer : ILoopListenerHandler, ILoopSocketHandler
{
    private readonly LoopHarness _harness;
    private readonly int _window;

    private EchoServer(LoopHarness harness, int window)
    {
        _harness = harness;
        _window = window;
    }

    public int Port { get; private set; }

    public int Accepted { get; private set; }

    /// <summary>Why sockets ended other than by their own end: read on the loop.</summary>
    public List<LoopError> Closed { get; } = [];

    public static async Task<EchoServer> StartAsync(LoopHarness harness, int window = LoopSocket.DefaultWindow)
    {
        var server = new EchoServer(harness, window);
        Socket listening = LoopHarness.Listening();
        server.Port = ((IPEndPoint)listening.LocalEndPoint!).Port;
        await harness.OnLoopAsync(() => new LoopListener(harness.Loop, listening, server));
        return server;
    }

    public void OnAccepted(LoopListener listener, int fd)
    {
        LoopSocket socket = LoopSocket.Adopt(_harness.Loop, fd, this, _window);
        socket.SetNoDelay();
        Accepted++;
    }

    public void OnReadable(LoopSocket socket)
    {
        while (true)
        {
            ReceiveResult read = socket.Receive(out ReadOnlySpan<byte> data);
            switch (read.Status)
            {
                case ReceiveStatus.Data:
                    if (socket.Send(data) == SendStatus.Full)
                    {
                        socket.ReadPaused = true;
                        return;
                    }
                    break;
                case ReceiveStatus.EndOfStream:
                    socket.CloseAfterDrain();
                    return;
                case ReceiveStatus.Failed:
                    Closed.Add(read.Error);
                    return;
                default:
                    return;
            }
        }
    }

    public void OnWritable(LoopSocket socket) => socket.ReadPaused = false;

    public void OnClosed(LoopSocket socket, LoopError reason)
    {
        Closed.Add(reason);
    }
}
