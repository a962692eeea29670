namespace Tunnel2.Loops.Sockets;

/// <summary>
/// A <see cref="LoopSocket"/>'s owner, called on the loop. A failure found by a call the owner makes (Receive, Send)
/// comes back as that call's value; <see cref="OnClosed"/> is for what the loop finds by itself (an error event, a
/// failed connect, a failed send of queued bytes, the loop stopping), once per socket.
/// </summary>
public interface ILoopSocketHandler
{
    /// <summary>A connect started by <c>LoopSocket.Connect</c> has completed.</summary>
    void OnConnected(LoopSocket socket)
    {
    }

    /// <summary>There are bytes (or the end of stream) to read: read until WouldBlock, or pause reading.</summary>
    void OnReadable(LoopSocket socket);

    /// <summary>The outbound queue has drained after the writer was told to stop (Full, Refused, a partial SendSome) or asked (NotifyWhenDrained).</summary>
    void OnWritable(LoopSocket socket);

    /// <summary>The socket is closed; the owner drops it.</summary>
    void OnClosed(LoopSocket socket, LoopError reason);
}
