using System.Net;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class StatusEndpointTests(BackendFixture fixture)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(200)]
    [InlineData(201)]
    [InlineData(302)]
    [InlineData(404)]
    [InlineData(418)]
    [InlineData(500)]
    [InlineData(503)]
    [InlineData(599)]
    public async Task Status_answers_with_the_code_and_a_tiny_text_body(int code)
    {
        using var response = await fixture.Client.GetAsync($"loadtest/status/{code}", Token);

        Assert.Equal(code, (int)response.StatusCode);
        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        var body = await response.Content.ReadAsStringAsync(Token);
        Assert.StartsWith(code.ToString(System.Globalization.CultureInfo.InvariantCulture), body, StringComparison.Ordinal);
        Assert.InRange(body.Length, 3, 64);
    }

    [Theory]
    [InlineData(204)]
    [InlineData(205)]
    [InlineData(304)]
    public async Task Status_without_content_has_an_empty_body(int code)
    {
        using var response = await fixture.Client.GetAsync($"loadtest/status/{code}", Token);

        Assert.Equal(code, (int)response.StatusCode);
        Assert.Empty(await response.Content.ReadAsByteArrayAsync(Token));
    }

    [Theory]
    [InlineData("abc")]
    [InlineData("99")]
    [InlineData("600")]
    [InlineData("100")]
    [InlineData("199")]
    [InlineData("-200")]
    [InlineData("2.5")]
    public async Task Status_rejects_a_bad_code_with_problem_json(string code)
    {
        using var response = await fixture.Client.GetAsync($"loadtest/status/{code}", Token);

        await ProblemAssert.IsProblemAsync(response, HttpStatusCode.BadRequest, code, Token);
    }
}
