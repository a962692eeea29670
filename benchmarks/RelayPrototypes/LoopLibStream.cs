using Tunnel2.Loops.Sockets;

namespace Tunnel2.RelayPrototypes;

/// <summary>One caller's or target's connection in <see cref="LoopLibRelay"/>: its credit and ends; the socket is the library's.</summary>
internal sealed class LoopLibStream(LoopLibRelay relay, uint id) : ILoopSocketHandler
{
    public readonly uint Id = id;
    public LoopSocket? Socket;
    public int Credit = Frame.Window;       // bytes this side may still send on the link
    public int Unacked;                     // bytes that reached the socket's kernel buffer, not yet returned as credit
    public int Draining;                    // bytes the library queued; returned as credit once it has drained
    public bool LocalEof, PeerFin, Removed, WaitingForLink;

    /// <summary>Reading goes on while there is credit and room in the link's buffer.</summary>
    public void UpdateReading()
    {
        if (Socket is { IsClosed: false } socket && !LocalEof)
        {
            socket.ReadPaused = Credit <= 0 || WaitingForLink;
        }
    }

    public void OnReadable(LoopSocket socket) => relay.ReadStream(this);

    public void OnWritable(LoopSocket socket)
    {
        int drained = Draining;
        Draining = 0;
        relay.Delivered(this, drained);
    }

    public void OnClosed(LoopSocket socket, LoopError reason) => relay.Fail(this);
}
