using Microsoft.AspNetCore.Http;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Policy;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.UnitTests.Forwarding.Steps;

/// <summary>A request's exchange as the route step and the access step leave it: routed to a session under a policy, and admitted.</summary>
internal static class ExchangeOf
{
    private static readonly SessionPolicy DefaultPolicy = new SessionPolicies().Default;

    public static ProxyExchange Admitted(HttpContext context, SessionRoute route, RequestHead head, bool hasBody = false, SessionPolicy? policy = null,
        string backendTarget = "/")
    {
        var exchange = new ProxyExchange();
        exchange.Enter(context, new RoutedSession(RouteStatus.Forward, route, backendTarget, NamesSession: true), policy ?? DefaultPolicy);
        exchange.Start(head, hasBody);
        return exchange;
    }
}
