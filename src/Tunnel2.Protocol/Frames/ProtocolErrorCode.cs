namespace Tunnel2.Protocol.Frames;

/// <summary>Why a stream was reset or an uplink went away; carried as a u32 in Reset and GoAway frames.</summary>
public enum ProtocolErrorCode : uint
{
    NoError = 0,
    ProtocolError = 1,
    Cancelled = 2,
    BackendUnreachable = 3,
    BackendTimeout = 4,
    BackendAborted = 5,
    Overloaded = 6,
    FlowControlError = 7,
    ResponseHeadTimeout = 8,
    InternalError = 9,
    Draining = 10,
    RequestBodyTooLarge = 11,

    /// <summary>Version 3: an upgraded stream moved no byte either way for the client's idle timeout.</summary>
    IdleTimeout = 12,

    /// <summary>
    /// Version 4: the client could not connect to its backend, so nothing of the request reached it; the server may try
    /// another client. A version-3 client says <see cref="BackendUnreachable"/> for this too.
    /// </summary>
    BackendConnectFailed = 13,
}
