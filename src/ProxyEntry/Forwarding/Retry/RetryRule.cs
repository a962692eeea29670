using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Pipeline;

namespace Tunnel2.ProxyEntry.Forwarding.Retry;

/// <summary>What one attempt may hand back to the retry policy instead of answering the caller.</summary>
/// <param name="MayRetry">A draining client's refusal may be retried (no body, attempts left).</param>
/// <param name="MayRetryConnect">The client's failure to connect to its backend may be retried on another client (once).</param>
/// <param name="MayRetryUnanswered">
/// An idempotent request's backend failing before it answered (reset, closed) may be retried on another client too, as
/// nginx's <c>proxy_next_upstream error</c> does; the request may have reached that backend, so only methods that RFC 9110
/// calls idempotent are.
/// </param>
internal readonly record struct RetryPermission(bool MayRetry, bool MayRetryConnect, bool MayRetryUnanswered);

/// <summary>
/// The rule "idempotent, bodiless, nothing answered yet: try another member". A request without a body that a draining
/// client refused, or whose client could not connect to its backend, never reached a backend: another client may take it
/// (the second kind once, on another client), and so may an idempotent one whose backend failed before answering.
/// </summary>
internal static class RetryRule
{
    /// <summary>How many clients one request is tried on at most.</summary>
    public const int MaxAttempts = 3;

    public static RetryPermission For(ProxyExchange exchange)
    {
        bool mayRetry = !exchange.HasBody && exchange.Attempt + 1 < MaxAttempts;
        bool mayRetryConnect = mayRetry && exchange.FailedMember is null;
        return new RetryPermission(mayRetry, mayRetryConnect,
            MayRetryUnanswered: mayRetryConnect && !exchange.IsUpgrade && HttpSyntax.IsIdempotentMethod(exchange.Head.Method));
    }
}
