using Tunnel2.ProxyEntry.Policy;

namespace Tunnel2.ProxyEntry.Routing;

/// <summary>
/// The route step's decision for one public request, made once as the request enters the proxy
/// (<c>UseProxyEntry</c>, <see cref="ExchangeRouter.Route"/>) and carried on it as a feature
/// (<c>HttpContext.Features.Get&lt;RoutedSession&gt;()</c>), as YARP's endpoint routing hands later middleware the route
/// it chose: the rate limiter reads the session from it, and the forwarder the session and the backend's target.
/// Nothing after it parses the path or the host again.
/// </summary>
internal sealed class RoutedSession
{
    /// <param name="policy">The session's settings, looked up once with the route; null for a route made without them (tests).</param>
    public RoutedSession(RouteStatus status, SessionRoute route, string backendTarget, bool namesSession, SessionPolicy? policy = null)
    {
        Status = status;
        Route = route;
        BackendTarget = backendTarget;
        NamesSession = namesSession;
        Policy = policy;
    }

    /// <summary>
    /// The session's one policy (its balancing, rate limit and TCP cap), looked up once with the route: the rate limiter
    /// and the balancing read it here. A shared object, resolved at start: carrying it costs no allocation.
    /// </summary>
    public SessionPolicy? Policy { get; }

    /// <summary>What to do with the request: forward it, or answer 404, 400 or the trailing-slash redirect.</summary>
    public RouteStatus Status { get; }

    /// <summary>The session, the prefix stripped from the path, and whether the host named it (its entry).</summary>
    public SessionRoute Route { get; }

    /// <summary>The session's id (<c>(none)</c>, or empty for a host that names none, when <see cref="NamesSession"/> is false).</summary>
    public string Session => Route.Session;

    /// <summary>
    /// The target the backend sees (the session prefix stripped, the path canonical); for
    /// <see cref="RouteStatus.Redirect"/>, the location.
    /// </summary>
    public string BackendTarget { get; }

    /// <summary>
    /// The request names a session whose limits it counts against: by its host, or by a path under
    /// <c>/session/{id}</c> (a trailing-slash redirect included). False for a 404 without a session, and for a path that
    /// climbs out of its session.
    /// </summary>
    public bool NamesSession { get; }
}
