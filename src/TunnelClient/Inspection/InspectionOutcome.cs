namespace Tunnel2.TunnelClient.Inspection;

/// <summary>How an inspected exchange ended.</summary>
public enum InspectionOutcome
{
    /// <summary>The whole response went back.</summary>
    Completed,

    /// <summary>The backend switched protocols (a WebSocket, …): recorded at the 101, its bytes are not.</summary>
    Upgraded,

    /// <summary>The backend could not be reached, failed before answering or cut the body short, or the client refused the request.</summary>
    Failed,

    /// <summary>The caller went away or the uplink closed before the end.</summary>
    Cancelled,
}
