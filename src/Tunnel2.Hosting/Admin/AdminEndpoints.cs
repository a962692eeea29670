using System.Security.Cryptography;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using OpenTelemetry.Metrics;

namespace Tunnel2.Hosting.Admin;

/// <summary>
/// The admin listener's pipeline, the same in both executables: the admin token when one is set (a bearer token;
/// anything else is 401 problem+json), <c>/metrics</c> in Prometheus' text format, <c>/healthz</c>, and 404
/// problem+json for the rest.
/// </summary>
public static class AdminEndpoints
{
    public const string MetricsPath = "/metrics";

    /// <param name="meterProvider">The process's provider when the admin pipeline runs in a host of its own (the client's); null to take it from the services.</param>
    public static void UseAdminEndpoints(this IApplicationBuilder admin, string? token, MeterProvider? meterProvider = null)
    {
        if (!string.IsNullOrEmpty(token))
        {
            byte[] expected = SHA256.HashData(Encoding.UTF8.GetBytes(token));
            admin.Use((context, next) => IsAuthorized(context.Request, expected) ? next(context) : RefuseAsync(context));
        }

        admin.UseOpenTelemetryPrometheusScrapingEndpoint(meterProvider, context => context.Request.Path == MetricsPath, path: null,
            configureBranchedPipeline: null, optionsName: null);
        admin.Run(context => context.Request.Path == "/healthz"
            ? context.Response.WriteAsync("ok")
            : Results.Problem(statusCode: StatusCodes.Status404NotFound, type: "urn:tunnel2:problem:not-found", title: "Not found",
                detail: $"The admin listener serves {MetricsPath} and /healthz.").ExecuteAsync(context));
    }

    /// <summary><c>Authorization: Bearer {token}</c>, compared in constant time (of hashes, so the length leaks nothing either).</summary>
    private static bool IsAuthorized(HttpRequest request, byte[] expected)
    {
        string? authorization = request.Headers.Authorization;
        if (authorization is null || !authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }

        byte[] presented = SHA256.HashData(Encoding.UTF8.GetBytes(authorization.AsSpan("Bearer ".Length).Trim().ToString()));
        return CryptographicOperations.FixedTimeEquals(presented, expected);
    }

    private static Task RefuseAsync(HttpContext context)
    {
        context.Response.Headers.WWWAuthenticate = "Bearer";
        return Results.Problem(statusCode: StatusCodes.Status401Unauthorized, type: "urn:tunnel2:problem:admin-token",
            title: "Admin token required", detail: "Send the admin token as 'Authorization: Bearer <token>'.").ExecuteAsync(context);
    }
}
