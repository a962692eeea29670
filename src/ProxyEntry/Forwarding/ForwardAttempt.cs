using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Heads;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Upgrades;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// The forward step: one attempt at a request on the stream opened for it on one client. It sends the body, reads the
/// response head and streams the answer back (or hands a 101 to <see cref="UpgradeRelay"/>); a failure before the
/// response head becomes problem details, after it the response is aborted. It never retries: a refusal the exchange's
/// <see cref="RetryPermission"/> allows is handed back as its outcome instead. Nor does it count anything on the member:
/// its <see cref="AttemptOutcome"/> says what happened, and the health step after it counts that
/// (<see cref="PassiveHealth"/>).
/// </summary>
internal sealed class ForwardAttempt
{
    private readonly RequestBodyPump _requestBody;
    private readonly UpgradeRelay _upgrades;
    private readonly FailureResponder _failures;
    private readonly ProxyEntryMetrics _metrics;
    private readonly ILogger _logger;

    public ForwardAttempt(RequestBodyPump requestBody, UpgradeRelay upgrades, FailureResponder failures, ProxyEntryMetrics metrics,
        ILogger<ForwardAttempt> logger)
    {
        _requestBody = requestBody;
        _upgrades = upgrades;
        _failures = failures;
        _metrics = metrics;
        _logger = logger;
    }

    /// <returns>Whether a response head came, the exchange failed, or the request may be retried on another client, and why.</returns>
    public async Task<AttemptOutcome> ForwardAsync(ProxyExchange exchange, IHttpExchange stream)
    {
        HttpContext context = exchange.Context;
        _metrics.RequestStarted();
        try
        {
            using (stream)
            {
                Task<ForwardingFailure?> requestBody = exchange.HasBody ? _requestBody.SendAsync(context, stream) : RequestBodyPump.None;
                ResponseHead head;
                try
                {
                    // The response-head timeout is the uplink's (UplinkSettings.ResponseHeadTimeout): it resets the stream.
                    head = await stream.ReadResponseHeadAsync().WaitAsync(context.RequestAborted);
                }
                catch (Exception ex)
                {
                    return await NoResponseHeadAsync(exchange, stream, requestBody, ex);
                }

                if (exchange.IsUpgrade && head.StatusCode == StatusCodes.Status101SwitchingProtocols)
                {
                    await _upgrades.RelayAsync(context, stream, exchange.Session, head);
                    return AttemptOutcome.Answered;
                }

                if (!IsFinalAnswer(exchange, stream, head))
                {
                    await InterimAnswerAsync(exchange, stream, requestBody);
                    return AttemptOutcome.Answered;
                }

                ResponseHeadWriter.Apply(head, context.Response);
                if (exchange.AffinityCookie is { } cookie)
                {
                    context.Response.Headers.Append(HeaderNames.SetCookie, cookie);
                }

                try
                {
                    await stream.CopyInputToAsync(context.Response.BodyWriter, chunked: false, tap: null, SendProgress(context), context.RequestAborted);
                }
                catch (Exception ex) when (ex is IOException or OperationCanceledException)
                {
                    await ResponseBodyFailedAsync(exchange, stream, requestBody, ex);
                    return AttemptOutcome.Answered;
                }

                await RequestBodyPump.StopAsync(context, requestBody);
                return AttemptOutcome.Answered;
            }
        }
        finally
        {
            _metrics.RequestEnded();
        }
    }

    /// <summary>
    /// The stream failed, or the caller left, before the response head: a refusal the retry rule allows goes back to the
    /// retry policy; anything else is answered here.
    /// </summary>
    private async Task<AttemptOutcome> NoResponseHeadAsync(ProxyExchange exchange, IHttpExchange stream, Task<ForwardingFailure?> requestBody, Exception ex)
    {
        HttpContext context = exchange.Context;
        if (ex is StreamResetException reset)
        {
            if (exchange.Retry.MayRetry && reset.ErrorCode == ProtocolErrorCode.Draining)
            {
                return AttemptOutcome.RetryAfterDrainingRefusal;
            }

            if ((exchange.Retry.MayRetryConnect && reset.ErrorCode == ProtocolErrorCode.BackendConnectFailed)
                || (exchange.Retry.MayRetryUnanswered && reset.ErrorCode == ProtocolErrorCode.BackendUnreachable))
            {
                return AttemptOutcome.RetryAfterBackendFailure;
            }
        }

        if (ex is OperationCanceledException && context.RequestAborted.IsCancellationRequested)
        {
            CallerGone(exchange, stream, "before the response head");
            stream.Reset(ProtocolErrorCode.Cancelled);
            await RequestBodyPump.StopAsync(context, requestBody);
            return AttemptOutcome.Failed;
        }

        stream.Reset(ProtocolErrorCode.Cancelled);

        // A caller whose own body broke (too slow, badly framed) caused the reset: the fault is theirs, not the backend's.
        ForwardingFailure failure = await RequestBodyPump.StopAsync(context, requestBody) ?? FromException(ex);
        if (failure == ForwardingFailure.CallerGone)
        {
            CallerGone(exchange, stream, "during the request body");
            return AttemptOutcome.Failed;
        }

        await _failures.FailAsync(context, stream.Id, exchange.Session, failure);
        return ex is StreamResetException { ErrorCode: ProtocolErrorCode.BackendUnreachable or ProtocolErrorCode.BackendConnectFailed }
            ? AttemptOutcome.BackendUnreachable
            : AttemptOutcome.Failed;
    }

    /// <summary>Whether the head that came is a final answer to pass on (an upgrade the backend declined is one).</summary>
    private static bool IsFinalAnswer(ProxyExchange exchange, IHttpExchange stream, ResponseHead head)
    {
        if (exchange.IsUpgrade)
        {
            // The backend answered without switching: the request had no body, so this side's half of the stream ends.
            stream.TrySendEnd();
        }

        return head.StatusCode >= StatusCodes.Status200OK;
    }

    /// <summary>The client passes on no interim answer and a 101 only to an upgrade request; anything else is its fault.</summary>
    private async Task InterimAnswerAsync(ProxyExchange exchange, IHttpExchange stream, Task<ForwardingFailure?> requestBody)
    {
        stream.Reset(ProtocolErrorCode.ProtocolError);
        await RequestBodyPump.StopAsync(exchange.Context, requestBody);
        await _failures.FailAsync(exchange.Context, stream.Id, exchange.Session, ForwardingFailure.FromResetCode(ProtocolErrorCode.ProtocolError));
    }

    /// <summary>The answer's body broke off: the caller left, gets a clean error if nothing reached it yet, or a cut connection.</summary>
    private async Task ResponseBodyFailedAsync(ProxyExchange exchange, IHttpExchange stream, Task<ForwardingFailure?> requestBody, Exception ex)
    {
        HttpContext context = exchange.Context;
        stream.Reset(ProtocolErrorCode.Cancelled);
        if (context.RequestAborted.IsCancellationRequested)
        {
            CallerGone(exchange, stream, "during the response body");
        }
        else if (!context.Response.HasStarted)
        {
            // Nothing reached the caller yet, so it can still get a clean error instead of a cut connection.
            context.Response.Clear();
            ForwardingFailure failure = await RequestBodyPump.StopAsync(context, requestBody) ?? FromException(ex);
            if (failure == ForwardingFailure.CallerGone)
            {
                CallerGone(exchange, stream, "during the request body");
                return;
            }

            await _failures.FailAsync(context, stream.Id, exchange.Session, failure);
            return;
        }
        else
        {
            ProxyEntryLog.ResponseAborted(_logger, exchange.Session, stream.Id, ex.Message);
            _metrics.RequestFailed("aborted-mid-response", context.Response.StatusCode);
            context.Abort();
        }

        await RequestBodyPump.StopAsync(context, requestBody);
    }

    private void CallerGone(ProxyExchange exchange, IHttpExchange stream, string when)
    {
        ProxyEntryLog.CallerGone(_logger, exchange.Session, stream.Id, when);
        _metrics.RequestFailed("caller-gone", ProxyEntryMetrics.ClientClosedRequest);
    }

    /// <summary>
    /// The public connection's send progress, when it reports one (the loop transport) and the answer goes straight
    /// onto it: on HTTP/1.1 the body's bytes are the connection's next ones, so once they are sent their credit goes back.
    /// </summary>
    private static ISendProgress? SendProgress(HttpContext context) =>
        HttpProtocol.IsHttp11(context.Request.Protocol) ? context.Features.Get<ISendProgress>() : null;

    private static ForwardingFailure FromException(Exception ex) =>
        ex is StreamResetException reset ? ForwardingFailure.FromResetCode(reset.ErrorCode) : ForwardingFailure.UplinkLost;
}
