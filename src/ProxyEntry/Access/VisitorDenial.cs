using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.ProxyEntry.Access;

/// <summary>Why a visitor was turned away, as the problem+json answer it gets.</summary>
public sealed record VisitorDenial(int Status, string Type, string Title, string Detail, string[] Challenges, int? RetryAfterSeconds = null)
{
    public Task WriteAsync(HttpContext context)
    {
        if (Challenges.Length > 0)
        {
            context.Response.Headers.WWWAuthenticate = Challenges;
        }

        return ProblemResponse.WriteAsync(context, Status, Type, Title, Detail, RetryAfterSeconds);
    }
}
