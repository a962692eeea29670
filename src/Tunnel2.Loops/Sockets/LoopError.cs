using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Sockets;

public enum LoopErrorKind
{
    None,
    /// <summary>The peer reset the connection, or it is gone (ECONNRESET, EPIPE).</summary>
    Reset,
    Refused,
    TimedOut,
    /// <summary>The loop stopped with the socket still open.</summary>
    LoopStopped,
    /// <summary>Any other errno.</summary>
    Other,
}

/// <summary>Why a socket ended: a value, never an exception, on the loop's paths.</summary>
public readonly record struct LoopError(LoopErrorKind Kind, int Errno)
{
    public static readonly LoopError None = new(LoopErrorKind.None, 0);

    public static readonly LoopError LoopStopped = new(LoopErrorKind.LoopStopped, 0);

    public static LoopError FromErrno(int errno) => errno switch
    {
        0 => None,
        LibC.EConnReset or LibC.EPipe => new LoopError(LoopErrorKind.Reset, errno),
        LibC.EConnRefused => new LoopError(LoopErrorKind.Refused, errno),
        LibC.ETimedOut => new LoopError(LoopErrorKind.TimedOut, errno),
        _ => new LoopError(LoopErrorKind.Other, errno),
    };
}
