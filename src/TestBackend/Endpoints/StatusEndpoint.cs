using System.Text;
using Microsoft.AspNetCore.WebUtilities;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

/// <summary><c>GET /loadtest/status/{code}</c>: any final status, with bodies encoded once.</summary>
internal static class StatusEndpoint
{
    public const int MinCode = 200;
    public const int MaxCode = 599;

    // "418 I'm a teapot" and so on, indexed by code - MinCode.
    private static readonly byte[][] Bodies = CreateBodies();

    public static Task HandleAsync(HttpContext context)
    {
        if (!RouteNumbers.TryGetInt64(context, "code", out var code, out var raw))
        {
            return ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid status code",
                $"'{raw}' is not a status code; use {MinCode} to {MaxCode}.");
        }

        if (code is >= 100 and < MinCode)
        {
            return ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid status code",
                $"{code} is an informational (1xx) status, which cannot be sent as a final response; use {MinCode} to {MaxCode}.");
        }

        if (code is < MinCode or > MaxCode)
        {
            return ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status400BadRequest, "Invalid status code",
                $"{code} is not an HTTP status code; use {MinCode} to {MaxCode}.");
        }

        var status = (int)code;
        context.Response.StatusCode = status;
        if (!CanHaveBody(status))
        {
            return Task.CompletedTask;
        }

        return StaticBody.WriteAsync(context.Response, ContentTypes.TextPlain, Bodies[status - MinCode]);
    }

    /// <summary>RFC 9110: 204, 205 and 304 responses carry no content (Kestrel refuses to write one).</summary>
    public static bool CanHaveBody(int status) => status is not (204 or 205 or 304);

    private static byte[][] CreateBodies()
    {
        var bodies = new byte[MaxCode - MinCode + 1][];
        for (var status = MinCode; status <= MaxCode; status++)
        {
            var reason = ReasonPhrases.GetReasonPhrase(status);
            var text = reason.Length == 0 ? $"{status}" : $"{status} {reason}";
            bodies[status - MinCode] = Encoding.UTF8.GetBytes(text);
        }

        return bodies;
    }
}
