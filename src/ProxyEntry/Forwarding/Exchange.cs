using Tunnel2.ProxyEntry.Balancing;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>One attempt at a request on one client, and what it may do when that client cannot serve it.</summary>
/// <param name="MayRetry">A draining client's refusal may be retried (no body, attempts left).</param>
/// <param name="MayRetryConnect">The client's failure to connect to its backend may be retried on another client (once).</param>
internal readonly record struct Exchange(SessionRoute Route, SessionMember Member, BalancingPolicy Policy, string? AffinityKey, bool MayRetry, bool MayRetryConnect);

/// <summary>How an exchange ended: over, or to be retried on another client, and why.</summary>
internal enum ExchangeOutcome
{
    Done,
    RefusedByDrainingClient,
    BackendConnectFailed,
}
