using Microsoft.AspNetCore.Http.HttpResults;
using Tunnel2.Hosting;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.TunnelServer.Admin;

/// <summary>
/// The one route group of the admin listener: the admin API, the dashboard, OpenAPI and the edge's certificate ask are
/// mapped on it. Its requests passed the admin token in their branch first; on any other port its paths answer the same
/// 404 as a path nobody serves.
/// </summary>
internal static class AdminRoutes
{
    /// <summary>What the public port answers for the admin paths: the same 404 as for any other path it does not serve.</summary>
    private static readonly ProblemHttpResult NotOnThisPort = TypedResults.Problem(statusCode: StatusCodes.Status404NotFound,
        type: ProblemTypes.NotFound, title: "Not found", detail: "Public requests go to /session/{id}/{path}.");

    public static RouteGroupBuilder Group(IEndpointRouteBuilder routes, ServerEndpoints listeners) =>
        routes.MapGroup("").AddEndpointFilter((context, next) =>
            listeners.IsAdmin(context.HttpContext) ? next(context) : ValueTask.FromResult<object?>(NotOnThisPort));
}
