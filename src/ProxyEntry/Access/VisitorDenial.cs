using Microsoft.AspNetCore.Http;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>Why a visitor was turned away, as the problem+json answer it gets.</summary>
public sealed record VisitorDenial(int Status, string Type, string Title, string Detail, string[] Challenges, int? RetryAfterSeconds = null)
{
    /// <summary>A rule has answered the request itself (a login's redirect or callback): nothing more to write.</summary>
    public static readonly VisitorDenial Answered = new(0, string.Empty, string.Empty, string.Empty, []);

    /// <summary>403: this visitor may not come in (its address, its account).</summary>
    public static VisitorDenial Forbidden(string detail) =>
        new(StatusCodes.Status403Forbidden, ProblemTypes.VisitorForbidden, "Forbidden", detail, []);

    /// <summary>401: credentials missing or wrong, with the challenges that say what the session takes.</summary>
    public static VisitorDenial Unauthorized(string detail, string[] challenges, int? retryAfterSeconds = null) =>
        new(StatusCodes.Status401Unauthorized, ProblemTypes.VisitorUnauthorized, "Unauthorized", detail, challenges, retryAfterSeconds);

    public Task WriteAsync(HttpContext context)
    {
        if (ReferenceEquals(this, Answered))
        {
            return Task.CompletedTask;
        }

        if (Challenges.Length > 0)
        {
            context.Response.Headers.WWWAuthenticate = Challenges;
        }

        return ProblemResponse.WriteAsync(context, Status, Type, Title, Detail, RetryAfterSeconds);
    }
}
