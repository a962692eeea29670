using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace Tunnel2.ProxyEntry.Routing;

/// <summary>What the route step decided for a request.</summary>
internal enum RouteStatus
{
    /// <summary>A session is named: forward the request to it.</summary>
    Forward,

    /// <summary>No session is named (404).</summary>
    NotFound,

    /// <summary>A <c>..</c> segment climbs above the session's root (400).</summary>
    OutsideSession,

    /// <summary><c>/session/{id}</c> without its slash: redirected to the session's root (the target is the location).</summary>
    Redirect,

    /// <summary>
    /// A session reached by a way its policy closes (a path, with <c>PathRouting</c> false): the same 404 as a session
    /// nobody serves, so the path does not tell that the session exists.
    /// </summary>
    Unreachable,
}

/// <summary>
/// The route step: the session a request goes to and the target its backend sees, from the path
/// (<c>/session/{id}/…</c>, <see cref="SessionTarget"/>) or from the host <see cref="HostRouter"/> matched (the whole
/// path is the backend's). Both read the raw target, so what chooses the session and what reaches the backend agree.
/// It runs once per request (<see cref="Route"/>); the steps after it read its <see cref="RoutedSession"/>.
/// </summary>
internal static class ExchangeRouter
{
    /// <summary>The first segment of a path-routed request's path (<c>/session/{id}/…</c>).</summary>
    public const string SessionSegment = "/session";

    private static readonly SessionRoute NoSession = new("(none)", string.Empty, ByHost: false);

    /// <summary>
    /// Routes a request once: by its host when <paramref name="hosts"/> knows it, else by its path under
    /// <c>/session/</c> (the raw target counts too: Kestrel's decoded and resolved <c>Path</c> of
    /// <c>/session/a/%2e%2e/%2e%2e/x</c> is <c>/x</c>, and such a request must get the forwarder's 400, not fall through).
    /// Null for a request that is not the proxy's (<c>/healthz</c>, the admin API): it goes on down the pipeline.
    /// </summary>
    public static RoutedSession? Route(HttpContext context, HostRouter hosts)
    {
        RouteStatus status;
        SessionRoute route;
        string backendTarget;
        if (hosts.IsEnabled && hosts.Match(context.Request.Host.Value, out string session) is var hostRoute and not HostRoute.None)
        {
            status = ByHost(context, hostRoute, session, out route, out backendTarget);
            return new RoutedSession(status, route, backendTarget, NamesSession: hostRoute == HostRoute.Session);
        }

        if (!context.Request.Path.StartsWithSegments(SessionSegment, StringComparison.Ordinal) && !RawTargetNamesSession(context))
        {
            return null;
        }

        status = ByPath(context, out route, out backendTarget);
        return new RoutedSession(status, route, backendTarget, NamesSession: status is RouteStatus.Forward or RouteStatus.Redirect);
    }

    public static RouteStatus ByPath(HttpContext context, out SessionRoute route, out string backendTarget)
    {
        switch (SessionTarget.TryParse(RawTarget(context), out string session, out string prefix, out backendTarget))
        {
            case SessionTargetStatus.NoSession:
                route = NoSession;
                return RouteStatus.NotFound;
            case SessionTargetStatus.ClimbsAboveSession:
                route = NoSession;
                return RouteStatus.OutsideSession;
            case SessionTargetStatus.SessionRootWithoutSlash:
                route = new SessionRoute(session, prefix, ByHost: false);
                backendTarget = prefix + backendTarget;
                return RouteStatus.Redirect;
        }

        route = new SessionRoute(session, prefix, ByHost: false);
        return RouteStatus.Forward;
    }

    public static RouteStatus ByHost(HttpContext context, HostRoute hostRoute, string session, out SessionRoute route, out string backendTarget)
    {
        if (hostRoute == HostRoute.NotASession)
        {
            route = new SessionRoute(string.Empty, string.Empty, ByHost: true);
            backendTarget = string.Empty;
            return RouteStatus.NotFound;
        }

        route = new SessionRoute(session, Prefix: string.Empty, ByHost: true);
        switch (CanonicalTarget.TryCreate(RawTarget(context), fixedSegments: 0, out backendTarget))
        {
            case CanonicalTargetStatus.ClimbsAboveRoot:
                return RouteStatus.OutsideSession;
            case CanonicalTargetStatus.NotOriginForm:
                // Absolute-form (a proxy-style request line) or '*': the path Kestrel took out of it.
                backendTarget = context.Request.Path.ToUriComponent() + context.Request.QueryString.ToUriComponent();
                break;
        }

        return RouteStatus.Forward;
    }

    private static bool RawTargetNamesSession(HttpContext context) =>
        context.Features.Get<IHttpRequestFeature>()?.RawTarget is { } raw && raw.StartsWith(SessionTarget.Prefix, StringComparison.Ordinal);

    private static string RawTarget(HttpContext context) =>
        context.Features.Get<IHttpRequestFeature>()?.RawTarget ?? context.Request.Path.Value ?? "/";
}
