namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// How one attempt on one client ended, as <see cref="ForwardAttempt"/> reports it: for the retry step, whether the
/// exchange is over or goes to another client; for the health step (<see cref="PassiveHealth"/>), what the attempt says
/// of the member it ran on. The attempt itself never counts anything on the member.
/// </summary>
internal enum AttemptOutcome
{
    /// <summary>A response head came from the member (passed on, upgraded, or refused as an interim answer): the exchange is over.</summary>
    Answered,

    /// <summary>
    /// The exchange is over without a response head, for a reason that says nothing of the member's backend: the caller
    /// left, the caller's own body failed, the uplink broke, the backend timed out.
    /// </summary>
    Failed,

    /// <summary>The member's client could not reach its backend (or it failed before answering), and the caller was told so: the exchange is over.</summary>
    BackendUnreachable,

    /// <summary>The member's client could not reach its backend (or it failed before answering an idempotent request): retried on another client.</summary>
    RetryAfterBackendFailure,

    /// <summary>The member's client is draining and refused the stream before it started: retried on another client.</summary>
    RetryAfterDrainingRefusal,
}

/// <summary>What an <see cref="AttemptOutcome"/> means for the steps that read it.</summary>
internal static class AttemptOutcomes
{
    /// <summary>The exchange is over: answered, or failed for good; no other client is tried.</summary>
    public static bool IsOver(this AttemptOutcome outcome) =>
        outcome is AttemptOutcome.Answered or AttemptOutcome.Failed or AttemptOutcome.BackendUnreachable;

    /// <summary>The member's backend could not be reached: counted towards its passive ejection.</summary>
    public static bool SaysBackendUnreachable(this AttemptOutcome outcome) =>
        outcome is AttemptOutcome.BackendUnreachable or AttemptOutcome.RetryAfterBackendFailure;
}
