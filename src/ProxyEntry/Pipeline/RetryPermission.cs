using Tunnel2.Balancing.Retry;

namespace Tunnel2.ProxyEntry.Pipeline;

/// <summary>
/// What one attempt may hand back to the retry policy instead of answering the caller: <see cref="RetryRule"/> applied
/// to the exchange, within the server's budget of <see cref="MaxAttempts"/> clients and one backend failure.
/// </summary>
/// <param name="MayRetry">A draining client's refusal may be retried (no body, attempts left).</param>
/// <param name="MayRetryConnect">The client's failure to connect to its backend may be retried on another client (once).</param>
/// <param name="MayRetryUnanswered">
/// An idempotent request's backend failing before it answered (reset, closed) may be retried on another client too, as
/// nginx's <c>proxy_next_upstream error</c> does; the request may have reached that backend, so only methods that RFC 9110
/// calls idempotent are.
/// </param>
internal readonly record struct RetryPermission(bool MayRetry, bool MayRetryConnect, bool MayRetryUnanswered)
{
    /// <summary>How many clients one request is tried on at most.</summary>
    public const int MaxAttempts = 3;

    /// <summary>
    /// The server streams a request's body to the client as the attempt starts, so a request with a body is never
    /// retried; a bodiless one is, on another client, while attempts are left (after a backend failure, once).
    /// </summary>
    public static RetryPermission For(ProxyExchange exchange)
    {
        string method = exchange.Head.Method;
        bool mayRetry = exchange.Attempt + 1 < MaxAttempts
                        && RetryRule.MayTryAnother(AttemptFailure.NotDelivered, method, exchange.HasBody, exchange.IsUpgrade);
        bool mayRetryConnect = mayRetry && exchange.FailedMember is null;
        return new RetryPermission(mayRetry, mayRetryConnect,
            MayRetryUnanswered: mayRetryConnect && RetryRule.MayTryAnother(AttemptFailure.Unanswered, method, exchange.HasBody, exchange.IsUpgrade));
    }
}
