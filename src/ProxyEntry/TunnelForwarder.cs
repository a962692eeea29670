using System.Diagnostics;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Admission;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Forwarding.Retry;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry;

/// <summary>
/// Forwards one public request, <c>/session/{id}/…</c> or on a session's own host name, through the steps of the
/// request path over its <see cref="ProxyExchange"/>: the route and the session's policy the request entered with
/// (<see cref="ExchangeEntry"/>, in <c>UseProxyEntry</c>), access (<see cref="ExchangeAdmission"/>), then pick, forward,
/// health and retry (<see cref="RetryPolicy"/>). Here the request is counted (drain, metrics) and traced around them,
/// and its exchange goes back to the pool at the end. Each step logs under its own category.
/// </summary>
internal sealed class TunnelForwarder
{
    private readonly ExchangeAdmission _admission;
    private readonly RetryPolicy _retry;
    private readonly FailureResponder _failures;
    private readonly PublicDrain _drain;
    private readonly ProxyEntryMetrics _metrics;
    private readonly ExchangeEntry _entry;

    public TunnelForwarder(ExchangeAdmission admission, RetryPolicy retry, FailureResponder failures, PublicDrain drain,
        ProxyEntryMetrics metrics, ExchangeEntry entry)
    {
        _admission = admission;
        _retry = retry;
        _failures = failures;
        _drain = drain;
        _metrics = metrics;
        _entry = entry;
    }

    /// <summary>
    /// Forwards a request the route step sent to a session, or answers what routing decided instead; either way the
    /// exchange goes back to the pool at the end (in the forward's own <c>finally</c>: no second state machine per request).
    /// </summary>
    public Task ForwardAsync(ProxyExchange exchange) =>
        exchange.Routed.Status == RouteStatus.Forward ? ForwardToSessionAsync(exchange) : AnswerAsync(exchange);

    private async Task AnswerAsync(ProxyExchange exchange)
    {
        HttpContext context = exchange.Context;
        RoutedSession routed = exchange.Routed;
        try
        {
            await (routed.Status switch
            {
                RouteStatus.NotFound => FailureResponder.NotFoundAsync(context, routed.Route),
                RouteStatus.Unreachable => _failures.TunnelNotFoundAsync(context, routed.Route, routed.BackendTarget),
                RouteStatus.OutsideSession => _failures.FailAsync(context, streamId: 0, routed.Session, ForwardingFailure.PathOutsideSession),
                _ => TrailingSlashRedirect.WriteAsync(context, routed.BackendTarget),
            });
        }
        finally
        {
            _entry.Leave(exchange);
        }
    }

    private async Task ForwardToSessionAsync(ProxyExchange exchange)
    {
        HttpContext context = exchange.Context;
        string session = exchange.Session;
        try
        {
            if (await _admission.AdmitAsync(exchange) is not { } head)
            {
                return;
            }

            exchange.Start(head, RequestBodyPump.RequestHasBody(context));
            using Activity? activity = ForwardActivity.Start(head, session);
            _drain.RequestStarted();
            long started = _metrics.DurationEnabled ? Stopwatch.GetTimestamp() : 0;
            try
            {
                await _retry.ForwardAsync(exchange);
            }
            finally
            {
                _drain.RequestEnded();
                activity?.SetTag(ProxyEntryMetrics.StatusTag, context.Response.StatusCode);
                if (started != 0)
                {
                    _metrics.RequestCompleted(exchange.SessionFound ? session : null, context.RequestAborted.IsCancellationRequested && !context.Response.HasStarted
                        ? ProxyEntryMetrics.ClientClosedRequest : context.Response.StatusCode, Stopwatch.GetElapsedTime(started));
                }
            }
        }
        finally
        {
            _entry.Leave(exchange);
        }
    }
}
