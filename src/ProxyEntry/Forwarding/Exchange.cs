using Tunnel2.ProxyEntry.Balancing;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>One attempt at a request on one client, and what it may do when that client cannot serve it.</summary>
/// <param name="MayRetry">A draining client's refusal may be retried (no body, attempts left).</param>
/// <param name="MayRetryConnect">The client's failure to connect to its backend may be retried on another client (once).</param>
/// <param name="MayRetryUnanswered">
/// An idempotent request's backend failing before it answered (reset, closed) may be retried on another client too, as
/// nginx's <c>proxy_next_upstream error</c> does; the request may have reached that backend, so only methods that RFC 9110
/// calls idempotent are.
/// </param>
internal readonly record struct Exchange(SessionRoute Route, SessionMember Member, BalancingPolicy Policy, string? AffinityKey, bool MayRetry, bool MayRetryConnect,
    bool MayRetryUnanswered);

/// <summary>How an exchange ended: over, or to be retried on another client, and why.</summary>
internal enum ExchangeOutcome
{
    Done,
    RefusedByDrainingClient,
    /// <summary>The client's backend could not be reached, or failed before answering an idempotent request.</summary>
    BackendFailed,
}
