namespace Tunnel2.ProxyEntry.Routing;

/// <summary>
/// The route step's decision for one public request, made once as the request enters the proxy
/// (<c>UseProxyEntry</c>, <see cref="ExchangeRouter.Route"/>): a value, kept in the request's pooled exchange
/// (<c>Pipeline/ProxyExchange</c>, the request's feature), as YARP's endpoint routing hands later middleware the route
/// it chose. The rate limiter reads the session from it, and the forwarder the session and the backend's target.
/// Nothing after it parses the path or the host again, and nothing is allocated to carry it.
/// </summary>
internal readonly record struct RoutedSession(RouteStatus Status, SessionRoute Route, string BackendTarget, bool NamesSession)
{
    /// <summary>The session's id (<c>(none)</c>, or empty for a host that names none, when <see cref="NamesSession"/> is false).</summary>
    public string Session => Route.Session;

    /// <summary>
    /// The request reached its session by <c>/session/{id}/…</c>, which the session's policy may close
    /// (<c>PathRouting</c>): a forward or the trailing-slash redirect, not by host.
    /// </summary>
    public bool ByPath => !Route.ByHost && Status is RouteStatus.Forward or RouteStatus.Redirect;

    /// <summary>The same request as one for a session that cannot be reached this way: the 404 of a session nobody serves.</summary>
    public RoutedSession Unreachable() => this with { Status = RouteStatus.Unreachable };
}
