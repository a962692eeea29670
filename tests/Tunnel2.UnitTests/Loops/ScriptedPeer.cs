using System.Net;
using System.Net.Sockets;
using System.Text;
using Tunnel2.Loops.Sockets;

namespace Tunnel2.UnitTests.Loops;

/// <summary>One loop socket that a test drives by hand: it keeps what it reads and records how the socket ended.</summary>
internal sealed class ScriptedPeer(LoopHarness harness) : ILoopListenerHandler, ILoopSocketHandler
{
    private readonly List<byte> _received = [];

    public int Port { get; private set; }

    public LoopSocket? Socket { get; set; }

    public bool Connected { get; private set; }

    public bool SawEnd { get; private set; }

    public LoopError? Failure { get; private set; }

    public LoopError? Closed { get; private set; }

    public int Writable { get; private set; }

    public static async Task<ScriptedPeer> StartAsync(LoopHarness harness)
    {
        var peer = new ScriptedPeer(harness);
        Socket listening = LoopHarness.Listening();
        peer.Port = ((IPEndPoint)listening.LocalEndPoint!).Port;
        await harness.OnLoopAsync(() => new LoopListener(harness.Loop, listening, peer));
        return peer;
    }

    public string Received() => Encoding.ASCII.GetString([.. _received]);

    public void OnAccepted(LoopListener listener, int fd) => Socket = LoopSocket.Adopt(harness.Loop, fd, this);

    public void OnConnected(LoopSocket socket) => Connected = true;

    public void OnReadable(LoopSocket socket)
    {
        while (true)
        {
            ReceiveResult read = socket.Receive(out ReadOnlySpan<byte> data);
            switch (read.Status)
            {
                case ReceiveStatus.Data:
                    _received.AddRange(data);
                    break;
                case ReceiveStatus.EndOfStream:
                    SawEnd = true;
                    return;
                case ReceiveStatus.Failed:
                    Failure = read.Error;
                    return;
                default:
                    return;
            }
        }
    }

    public void OnWritable(LoopSocket socket) => Writable++;

    public void OnClosed(LoopSocket socket, LoopError reason) => Closed = reason;
}
