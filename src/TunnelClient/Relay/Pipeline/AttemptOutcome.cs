namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>How one attempt on one backend ended, as the retry policy needs to know it.</summary>
internal enum AttemptOutcome
{
    /// <summary>The exchange is over: answered, aborted, or failed for good (<see cref="AttemptResult.Failure"/>).</summary>
    Done,

    /// <summary>The backend's response head came: the exchange goes on (a step's result, never an attempt's).</summary>
    Answered,

    /// <summary>No connection to the backend: nothing reached it.</summary>
    ConnectFailed,

    /// <summary>The request went out, and the backend failed (or answered badly) before its response head.</summary>
    FailedBeforeAnswer,

    /// <summary>The request went out, and the backend closed the connection without a byte of answer.</summary>
    ClosedWithoutAnswer,
}
