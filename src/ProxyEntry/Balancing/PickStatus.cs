namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>How a pick ended.</summary>
public enum PickStatus
{
    /// <summary>A member that can take the request.</summary>
    Picked,

    /// <summary>
    /// Every ready member is at its stream limit: one of them is returned anyway, and opening the stream reports the
    /// limit (503).
    /// </summary>
    AllFull,

    /// <summary>The session has clients, but none is ready (health probe failing, or ejected): 503, not 502.</summary>
    NoneReady,

    /// <summary>No client serves the session, or every one is closing.</summary>
    NoClient,
}
