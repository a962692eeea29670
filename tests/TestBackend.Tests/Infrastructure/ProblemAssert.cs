using System.Net;
using System.Text.Json;

namespace Tunnel2.TestBackend.Tests.Infrastructure;

internal static class ProblemAssert
{
    /// <summary>Asserts an RFC 9457 problem+json response with the given status whose detail mentions <paramref name="detailMentions"/>.</summary>
    public static async Task<JsonElement> IsProblemAsync(
        HttpResponseMessage response, HttpStatusCode status, string detailMentions, CancellationToken cancellationToken)
    {
        Assert.Equal(status, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);

        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync(cancellationToken));
        var problem = document.RootElement.Clone();
        Assert.Equal((int)status, problem.GetProperty("status").GetInt32());
        Assert.False(string.IsNullOrWhiteSpace(problem.GetProperty("type").GetString()));
        Assert.False(string.IsNullOrWhiteSpace(problem.GetProperty("title").GetString()));
        Assert.Contains(detailMentions, problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        return problem;
    }
}
