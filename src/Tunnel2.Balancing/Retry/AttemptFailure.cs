namespace Tunnel2.Balancing.Retry;

/// <summary>How far a failed attempt got, as far as the side that made it can tell.</summary>
public enum AttemptFailure
{
    /// <summary>
    /// The request reached no backend: the member refused it (a draining client) or could not connect to its backend.
    /// </summary>
    NotDelivered,

    /// <summary>The request may have reached the backend, which then failed (reset, closed) before answering.</summary>
    Unanswered,
}
