using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Heads;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Admission;

/// <summary>
/// The access step, after routing: the session's visitor rules (from the policy snapshot the route step read), the
/// node's drain, and the head that would cross the tunnel (framing the tunnel must not pass on, headers over the
/// limit). Rate limits run before, as middleware.
/// </summary>
internal sealed class ExchangeAdmission
{
    private readonly VisitorAccess _access;
    private readonly PublicDrain _drain;
    private readonly FailureResponder _failures;
    private readonly long _maxHeadersBytes;

    public ExchangeAdmission(VisitorAccess access, PublicDrain drain, FailureResponder failures, IOptions<ProxyEntryOptions> options)
    {
        _access = access;
        _drain = drain;
        _failures = failures;
        _maxHeadersBytes = options.Value.Limits.MaxRequestHeadersBytes;
    }

    /// <returns>The head to forward; null when the request goes no further (its refusal written).</returns>
    public async ValueTask<RequestHead?> AdmitAsync(ProxyExchange exchange)
    {
        HttpContext context = exchange.Context;
        RoutedSession routed = exchange.Routed;
        SessionRoute route = routed.Route;
        string session = route.Session;
        if (await _access.CheckAsync(context, exchange.SessionPolicy.Visitors, session, route.Prefix) is { } denial)
        {
            await denial.WriteAsync(context);
            return null;
        }

        if (_drain.IsDraining)
        {
            await _failures.FailAsync(context, streamId: 0, session, ForwardingFailure.ServerDraining);
            return null;
        }

        RequestHead head = RequestHeadBuilder.Build(context, routed.BackendTarget, route.Prefix, out long headerBytes, out RequestHeadProblem problem);
        if (ForwardingFailure.FromHeadProblem(problem) is { } refused)
        {
            // The caller framed this request oddly; what follows it on the connection is not trusted either.
            context.Response.Headers.Connection = "close";
            await _failures.FailAsync(context, streamId: 0, session, refused);
            return null;
        }

        if (headerBytes > _maxHeadersBytes)
        {
            await _failures.FailAsync(context, streamId: 0, session, ForwardingFailure.HeadersTooLarge);
            return null;
        }

        return head;
    }
}
