namespace Tunnel2.Balancing.Retry;

/// <summary>
/// The one rule for trying a request on another member after an attempt failed before anything was answered, used by
/// the server for its clients and by a client for its backends. A request that reached no backend may go to another
/// member while none of its body has been spent; one that may have reached a backend only when it has no body, is not an
/// upgrade, and its method is idempotent (nginx's <c>proxy_next_upstream error</c>, without <c>non_idempotent</c>).
/// How many members, and which, each side decides.
/// </summary>
public static class RetryRule
{
    /// <param name="bodySent">Some of the request's body has left the caller for this attempt, so it cannot be sent again.</param>
    /// <param name="isUpgrade">An upgrade request (WebSocket, …), whose effects a backend may already have begun.</param>
    public static bool MayTryAnother(AttemptFailure failure, string method, bool bodySent, bool isUpgrade) =>
        !bodySent && (failure == AttemptFailure.NotDelivered || (!isUpgrade && IsIdempotentMethod(method)));

    /// <summary>
    /// A method RFC 9110 §9.2.2 calls idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE): sending it twice has the effect
    /// of sending it once, so a proxy may send it again when the first try's answer was lost.
    /// </summary>
    public static bool IsIdempotentMethod(string method) => method switch
    {
        "GET" or "HEAD" or "OPTIONS" or "TRACE" or "PUT" or "DELETE" => true,
        _ => false,
    };
}
