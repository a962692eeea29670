namespace Tunnel2.Loops.Sockets;

public enum ReceiveStatus
{
    /// <summary><see cref="ReceiveResult.Bytes"/> bytes were read.</summary>
    Data,
    /// <summary>Nothing to read now; the loop calls OnReadable again when there is.</summary>
    WouldBlock,
    /// <summary>The peer half-closed: no more bytes will come (the socket can still send).</summary>
    EndOfStream,
    /// <summary>The read failed (<see cref="ReceiveResult.Error"/>); the socket is closed now.</summary>
    Failed,
    /// <summary>The socket was already closed.</summary>
    Closed,
}

public readonly record struct ReceiveResult(ReceiveStatus Status, int Bytes, LoopError Error);
