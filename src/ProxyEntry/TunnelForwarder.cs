using System.Diagnostics;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Access;
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
/// request path over one <see cref="ProxyExchange"/>: the route the request entered with (<see cref="RoutedSession"/>,
/// decided once in <c>UseProxyEntry</c>), access (<see cref="ExchangeAdmission"/>), then pick, forward, health and retry
/// (<see cref="RetryPolicy"/>). Here the request is counted (drain, metrics) and traced around them. Each step logs
/// under its own category.
/// </summary>
internal sealed class TunnelForwarder
{
    private readonly ExchangeAdmission _admission;
    private readonly RetryPolicy _retry;
    private readonly FailureResponder _failures;
    private readonly PublicDrain _drain;
    private readonly ProxyEntryMetrics _metrics;
    private readonly ProxyExchangePool _exchanges;

    public TunnelForwarder(ExchangeAdmission admission, RetryPolicy retry, FailureResponder failures, PublicDrain drain,
        ProxyEntryMetrics metrics, ProxyExchangePool exchanges)
    {
        _admission = admission;
        _retry = retry;
        _failures = failures;
        _drain = drain;
        _metrics = metrics;
        _exchanges = exchanges;
    }

    /// <summary>Forwards a request the route step sent to a session, or answers what routing decided instead.</summary>
    public Task ForwardAsync(HttpContext context, RoutedSession routed) => routed.Status switch
    {
        RouteStatus.Forward => ForwardToSessionAsync(context, routed),
        RouteStatus.NotFound => FailureResponder.NotFoundAsync(context, routed.Route),
        RouteStatus.OutsideSession => _failures.FailAsync(context, streamId: 0, routed.Session, ForwardingFailure.PathOutsideSession),
        _ => TrailingSlashRedirect.WriteAsync(context, routed.BackendTarget),
    };

    private async Task ForwardToSessionAsync(HttpContext context, RoutedSession routed)
    {
        if (await _admission.AdmitAsync(context, routed) is not { } head)
        {
            return;
        }

        ProxyExchange exchange = _exchanges.Rent();
        exchange.Start(context, routed, head, RequestBodyPump.RequestHasBody(context));
        using Activity? activity = ForwardActivity.Start(head, routed.Session);
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
                _metrics.RequestCompleted(exchange.SessionFound ? routed.Session : null, context.RequestAborted.IsCancellationRequested && !context.Response.HasStarted
                    ? ProxyEntryMetrics.ClientClosedRequest : context.Response.StatusCode, Stopwatch.GetElapsedTime(started));
            }

            _exchanges.Return(exchange);
        }
    }
}
