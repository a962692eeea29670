using Tunnel2.Loops.Sockets;

namespace Tunnel2.Protocol.Relaying.OnLoop;

/// <summary>How a <see cref="LoopStreamConnection"/> ended, for its owner's log line and counts (judged off the loop).</summary>
public readonly record struct LoopRelayEnd(LoopRelayEndKind Kind, LoopError Error = default, string? Detail = null)
{
    public static LoopRelayEnd Closed => new(LoopRelayEndKind.Closed);

    public static LoopRelayEnd Aborted => new(LoopRelayEndKind.Aborted);

    public static LoopRelayEnd Failed(LoopError error) => new(LoopRelayEndKind.SocketFailed, error);

    /// <summary>The socket never connected (the owner's own reason, such as a dial that failed).</summary>
    public static LoopRelayEnd Unconnected(string why) => new(LoopRelayEndKind.Unconnected, default, why);
}

/// <summary>The kinds of <see cref="LoopRelayEnd"/>.</summary>
public enum LoopRelayEndKind
{
    /// <summary>Both ways ended cleanly: each side's FIN passed on.</summary>
    Closed,

    /// <summary>The stream was reset (by the peer, or by this side: an idle timeout) or its uplink died.</summary>
    Aborted,

    /// <summary>The socket broke (a reset, an error), or the loop stopped.</summary>
    SocketFailed,

    /// <summary>The socket never connected.</summary>
    Unconnected,
}
