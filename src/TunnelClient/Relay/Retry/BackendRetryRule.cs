using Tunnel2.Balancing.Retry;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Retry;

/// <summary>
/// The client's retry decision after a failed attempt, in one place:
/// <list type="bullet">
/// <item>nothing reached the backend (no connection): another backend may take the request, body or not;</item>
/// <item>a keep-alive connection the backend had closed while idle: one fresh try on the same backend, without a body;</item>
/// <item>the request may have reached a backend that failed before answering: another only under the rule
/// "idempotent, bodiless, nothing answered yet: try another member" (<see cref="MayResend"/>).</item>
/// </list>
/// Each backend is tried once per request (<see cref="Picking.BackendPicker"/>); then a version-4 server may try the
/// request on another client.
/// </summary>
internal static class BackendRetryRule
{
    public static RetryDecision Decide(RelayExchange exchange, AttemptOutcome outcome) => outcome switch
    {
        AttemptOutcome.ConnectFailed when RetryRule.MayTryAnother(AttemptFailure.NotDelivered, exchange.Request.Method, bodySent: false, exchange.IsUpgrade)
            => RetryDecision.AnotherBackend,
        AttemptOutcome.ClosedWithoutAnswer when exchange.ConnectionReused && !exchange.HasBody && exchange.AttemptOnBackend == 0 => RetryDecision.SameBackend,
        AttemptOutcome.FailedBeforeAnswer or AttemptOutcome.ClosedWithoutAnswer when MayResend(exchange) => RetryDecision.AnotherBackend,
        _ => RetryDecision.None,
    };

    /// <summary>
    /// The shared rule (<see cref="RetryRule"/>) for a request that may have reached a backend which then failed before
    /// answering: another backend only when it has no body and RFC 9110 calls its method idempotent.
    /// </summary>
    public static bool MayResend(RelayExchange exchange) =>
        RetryRule.MayTryAnother(AttemptFailure.Unanswered, exchange.Request.Method, bodySent: exchange.HasBody, exchange.IsUpgrade);
}
