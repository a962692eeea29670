using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Relaying;

/// <summary>
/// How a <see cref="DuplexRelay"/> ended, as YARP's <c>StreamCopyResult</c> tells its forwarder: all a caller needs for
/// its log line and metrics, so that how the bytes moved (two copy tasks today, an event loop later) stays inside.
/// </summary>
/// <param name="FirstEnded">
/// The side whose direction ended first: <see cref="RelaySide.Local"/> when the local connection's bytes stopped first.
/// Noted before that end was passed on, so an end the other side only answered is never counted first.
/// </param>
/// <param name="FromLocal">How the local connection's bytes towards the tunnel ended.</param>
/// <param name="FromTunnel">How the tunnel's bytes towards the local connection ended.</param>
/// <param name="FailedSide">The side of the first failure, null when nothing failed.</param>
/// <param name="Error">The first failure's exception, when it had one (a stopped direction has none).</param>
/// <param name="PeerReset">
/// The stream's reset code as the relay found it at the first failure, before it reset the stream itself: set when the
/// peer reset the stream (or the uplink died), null otherwise.
/// </param>
/// <param name="Canceled">The caller's token ended the relay.</param>
/// <param name="BytesToTunnel">
/// The local connection's bytes the uplink's writer had taken when the relay ended (<see cref="Multiplexing.IStreamHandle.SentBytes"/>):
/// the last frames may still be queued then.
/// </param>
/// <param name="BytesFromTunnel">Bytes the stream received (written to the local connection).</param>
public readonly record struct DuplexRelayResult(
    RelaySide FirstEnded,
    RelayOutcome FromLocal,
    RelayOutcome FromTunnel,
    RelaySide? FailedSide,
    Exception? Error,
    ProtocolErrorCode? PeerReset,
    bool Canceled,
    long BytesToTunnel,
    long BytesFromTunnel)
{
    /// <summary>Both directions ended cleanly: each side's end reached the other.</summary>
    public bool IsClean => FromLocal == RelayOutcome.Completed && FromTunnel == RelayOutcome.Completed;
}
