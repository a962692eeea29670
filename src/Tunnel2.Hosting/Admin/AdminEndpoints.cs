using System.Security.Cryptography;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using OpenTelemetry.Metrics;

namespace Tunnel2.Hosting.Admin;

/// <summary>
/// The admin listener's pipeline, the same in both executables: the admin token when one is set (a bearer token;
/// anything else is 401 problem+json), <c>/metrics</c> in Prometheus' text format, then the executable's own
/// endpoints (the server's admin API) or <c>/healthz</c> and 404 problem+json.
/// </summary>
public static class AdminEndpoints
{
    public const string MetricsPath = "/metrics";

    /// <summary>The whole admin pipeline of a host that serves nothing else (the client's): access, <c>/healthz</c>, 404.</summary>
    /// <param name="meterProvider">The process's provider when the admin pipeline runs in a host of its own; null to take it from the services.</param>
    public static void UseAdminEndpoints(this IApplicationBuilder admin, string? token, MeterProvider? meterProvider = null)
    {
        admin.UseAdminAccess(token, meterProvider);
        admin.Run(context => context.Request.Path == "/healthz"
            ? context.Response.WriteAsync("ok")
            : WriteProblemAsync(context, StatusCodes.Status404NotFound, ProblemTypes.NotFound, "Not found",
                $"The admin listener serves {MetricsPath} and /healthz."));
    }

    /// <summary>
    /// The start of every admin pipeline: the admin token when one is set, then <c>/metrics</c>; other requests go on
    /// (to the server's admin API, or to a 404).
    /// </summary>
    public static IApplicationBuilder UseAdminAccess(this IApplicationBuilder admin, string? token, MeterProvider? meterProvider = null)
    {
        admin.UseAdminToken(token);
        return admin.UseOpenTelemetryPrometheusScrapingEndpoint(meterProvider, context => context.Request.Path == MetricsPath, path: null,
            configureBranchedPipeline: null, optionsName: null);
    }

    /// <summary>Refuses (401 problem+json) every request without the admin token, when one is set.</summary>
    public static IApplicationBuilder UseAdminToken(this IApplicationBuilder admin, string? token)
    {
        if (!string.IsNullOrEmpty(token))
        {
            byte[] expected = SHA256.HashData(Encoding.UTF8.GetBytes(token));
            admin.Use((context, next) => IsAuthorized(context.Request, expected) ? next(context) : RefuseAsync(context));
        }

        return admin;
    }

    /// <summary>
    /// <c>Authorization: Bearer {token}</c>, or an <c>access_token</c> query parameter (RFC 6750 §2.3: a browser's page
    /// load and its EventSource cannot set a header), compared in constant time (of hashes, so the length leaks nothing).
    /// </summary>
    private static bool IsAuthorized(HttpRequest request, byte[] expected)
    {
        string? authorization = request.Headers.Authorization;
        string? presented = authorization is not null && authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase)
            ? authorization["Bearer ".Length..].Trim()
            : request.Query["access_token"].ToString();
        return !string.IsNullOrEmpty(presented)
               && CryptographicOperations.FixedTimeEquals(SHA256.HashData(Encoding.UTF8.GetBytes(presented)), expected);
    }

    private static Task RefuseAsync(HttpContext context)
    {
        context.Response.Headers.WWWAuthenticate = "Bearer";
        return WriteProblemAsync(context, StatusCodes.Status401Unauthorized, ProblemTypes.AdminToken, "Admin token required",
            "Send the admin token as 'Authorization: Bearer <token>' (or ?access_token=<token> from a browser).");
    }

    /// <summary>An RFC 9457 problem, serialized by generated code (the hosts may run as Native AOT, without reflection).</summary>
    public static Task WriteProblemAsync(HttpContext context, int status, string type, string title, string detail)
    {
        context.Response.StatusCode = status;
        var problem = new ProblemDetails { Status = status, Type = type, Title = title, Detail = detail, Instance = context.Request.Path };
        return context.Response.WriteAsJsonAsync(problem, AdminProblemJsonContext.Default.ProblemDetails, "application/problem+json");
    }
}
