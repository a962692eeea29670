using Tunnel2.Protocol.Frames;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// Why a TCP caller's relay ended, as a metric's cause and a log's text: the same words whichever engine relayed it
/// (<see cref="TcpCallerRelay"/> on the runtime's sockets, <see cref="LoopCallerConnection"/> on the loop).
/// </summary>
internal static class TcpCallerEnd
{
    public static readonly (string Cause, string Text) Closed = ("closed", "closed by both sides");

    public static readonly (string Cause, string Text) Idle = ("idle-timeout", "idle timeout");

    /// <summary>The server stopped its callers' loop (shutting down, after the drain) with the connection still open.</summary>
    public static readonly (string Cause, string Text) Stopping = ("server-stopping", "cut: the server is stopping");

    public static (string Cause, string Text) UplinkLost(string? why) => ("uplink-lost", $"the uplink was lost ({why})");

    /// <summary>The client reset the stream: its target refused or broke the connection, or it stopped.</summary>
    public static (string Cause, string Text) ClientReset(ProtocolErrorCode code) => ("client-reset", $"the client reset the stream ({code}{code switch
    {
        ProtocolErrorCode.BackendConnectFailed => ": its target refused the connection",
        ProtocolErrorCode.BackendAborted => ": its target broke the connection",
        _ => string.Empty,
    }})");

    public static (string Cause, string Text) CallerGone(string why) => ("caller-gone", $"the caller went away ({why})");

    public static (string Cause, string Text) CallerNotReading(string why) => ("caller-gone", $"the caller stopped reading ({why})");
}
