using System.Diagnostics;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding.Retry;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// Forwards one public request, <c>/session/{id}/…</c> or on a session's own host name, through the steps of the
/// request path over one <see cref="ProxyExchange"/>: route (<see cref="ExchangeRouter"/>), access
/// (<see cref="ExchangeAdmission"/>), then pick, forward and retry (<see cref="RetryPolicy"/>, <see cref="ForwardAttempt"/>).
/// Here the request is counted (drain, metrics) and traced around them. Its logger's category names the log lines of
/// every step.
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

    public Task ForwardAsync(HttpContext context) =>
        Dispatch(context, ExchangeRouter.ByPath(context, out SessionRoute route, out string backendTarget), route, backendTarget);

    /// <summary>Forwards a request that <see cref="HostRouter"/> routed by its host: the whole path is the backend's.</summary>
    public Task ForwardByHostAsync(HttpContext context, HostRoute route, string session) =>
        Dispatch(context, ExchangeRouter.ByHost(context, route, session, out SessionRoute sessionRoute, out string backendTarget), sessionRoute, backendTarget);

    private Task Dispatch(HttpContext context, RouteStatus status, in SessionRoute route, string backendTarget) => status switch
    {
        RouteStatus.Forward => ForwardToSessionAsync(context, route, backendTarget),
        RouteStatus.NotFound => FailureResponder.NotFoundAsync(context, route),
        RouteStatus.OutsideSession => _failures.FailAsync(context, streamId: 0, route.Session, ForwardingFailure.PathOutsideSession),
        _ => TrailingSlashRedirect.WriteAsync(context, backendTarget),
    };

    private async Task ForwardToSessionAsync(HttpContext context, SessionRoute route, string backendTarget)
    {
        if (await _admission.AdmitAsync(context, route, backendTarget) is not { } head)
        {
            return;
        }

        ProxyExchange exchange = _exchanges.Rent();
        exchange.Start(context, route, backendTarget, head, RequestBodyPump.RequestHasBody(context));
        using Activity? activity = ForwardActivity.Start(head, route.Session);
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
                _metrics.RequestCompleted(exchange.SessionFound ? route.Session : null, context.RequestAborted.IsCancellationRequested && !context.Response.HasStarted
                    ? ProxyEntryMetrics.ClientClosedRequest : context.Response.StatusCode, Stopwatch.GetElapsedTime(started));
            }

            _exchanges.Return(exchange);
        }
    }
}
