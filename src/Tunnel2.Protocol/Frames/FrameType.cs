namespace Tunnel2.Protocol.Frames;

/// <summary>The kind of a frame; the byte at offset 4 of every frame header.</summary>
public enum FrameType : byte
{
    RequestHead = 1,
    ResponseHead = 2,
    Data = 3,
    Reset = 4,
    WindowUpdate = 5,
    Ping = 6,
    Pong = 7,
    GoAway = 8,

    /// <summary>Version 4, client to server, stream 0: whether the client's backend passes its health probe (u32: 1 ready, 0 not).</summary>
    Health = 9,

    /// <summary>Version 5, server to client: opens a raw TCP stream (docs/protocol.md §3, "TCP streams"); the payload names the caller.</summary>
    TcpOpen = 10,
}
