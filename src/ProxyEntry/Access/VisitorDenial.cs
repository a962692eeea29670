using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>Why a visitor was turned away, as the problem+json answer it gets.</summary>
public sealed record VisitorDenial(int Status, string Type, string Title, string Detail, string[] Challenges, int? RetryAfterSeconds = null)
{
    /// <summary>A rule has answered the request itself (a login's redirect or callback): nothing more to write.</summary>
    public static readonly VisitorDenial Answered = new(0, string.Empty, string.Empty, string.Empty, []);

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
