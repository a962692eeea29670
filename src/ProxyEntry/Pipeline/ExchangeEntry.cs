using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Routing;
using Tunnel2.ProxyEntry.Policy;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry.Pipeline;

/// <summary>
/// Where a public request enters the proxy: routed once (<see cref="ExchangeRouter"/>), its session's policy read once
/// (one volatile read of the current snapshot, <see cref="SessionPolicies.For"/>), both kept in a pooled
/// <see cref="ProxyExchange"/> set as the request's feature, which the rate limiter and the forwarder read. Nothing is
/// allocated per request here. The exchange goes back to the pool when the forwarder is done with it, or when the rate
/// limiter turns the request away (<see cref="Leave"/>).
/// </summary>
internal sealed class ExchangeEntry(HostRouter hosts, SessionPolicies policies, ProxyExchangePool pool)
{
    /// <returns>The request's exchange, set as its feature; null for a request that is not the proxy's.</returns>
    public ProxyExchange? Enter(HttpContext context)
    {
        if (ExchangeRouter.Route(context, hosts) is not { } routed)
        {
            return null;
        }

        SessionPolicy policy = policies.For(routed.Session);
        if (routed.ByPath && !policy.PathRouting)
        {
            // Reached only by its host names: answered as a session nobody serves, its own limits and rules unread.
            routed = routed.Unreachable();
            policy = policies.Default;
        }

        ProxyExchange exchange = pool.Rent();
        exchange.Enter(context, routed, policy);
        context.Features.Set(exchange);
        return exchange;
    }

    /// <summary>The request is done with its exchange: off the request, back to the pool.</summary>
    public void Leave(ProxyExchange exchange)
    {
        exchange.Context.Features.Set<ProxyExchange>(null);
        pool.Return(exchange);
    }
}
