namespace Tunnel2.Loops.Sockets;

/// <summary>What became of the bytes given to <see cref="LoopSocket.Send(ReadOnlySpan{byte})"/>.</summary>
public enum SendStatus
{
    /// <summary>All of them went to the kernel.</summary>
    Sent,
    /// <summary>What the socket could not take now is queued; the queue is below the window: keep writing.</summary>
    Queued,
    /// <summary>Taken and queued, and the queue has reached the window: stop writing until OnWritable.</summary>
    Full,
    /// <summary>Not taken: the queue was already at its window (the writer did not stop at <see cref="Full"/>).
    /// OnWritable follows when it has drained.</summary>
    Refused,
    /// <summary>Not taken: the socket is closed, failed (see <see cref="LoopSocket.LastError"/>) or shut for writing.</summary>
    Closed,
}
