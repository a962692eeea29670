using System.Net;
using System.Text.Json;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class SimpleEndpointTests(BackendFixture fixture)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Ping_answers_pong_as_plain_text()
    {
        using var response = await fixture.Client.GetAsync("loadtest/ping", Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal(4, response.Content.Headers.ContentLength);
        Assert.Equal("pong", await response.Content.ReadAsStringAsync(Token));
    }

    [Fact]
    public async Task Healthz_answers_ok_as_plain_text()
    {
        using var response = await fixture.Client.GetAsync("healthz", Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal("ok", await response.Content.ReadAsStringAsync(Token));
    }

    [Fact]
    public async Task Fast_answers_the_same_small_json_object_every_time()
    {
        using var first = await fixture.Client.GetAsync("loadtest/fast", Token);
        using var second = await fixture.Client.GetAsync("loadtest/fast", Token);

        Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        Assert.Equal("application/json", first.Content.Headers.ContentType?.MediaType);
        var body = await first.Content.ReadAsStringAsync(Token);
        Assert.Equal(body, await second.Content.ReadAsStringAsync(Token));
        Assert.Equal(body.Length, first.Content.Headers.ContentLength);

        using var json = JsonDocument.Parse(body);
        Assert.Equal("ok", json.RootElement.GetProperty("status").GetString());
        Assert.Equal("Tunnel2.TestBackend", json.RootElement.GetProperty("service").GetString());
    }

    [Fact]
    public async Task Unknown_path_is_404_problem_json()
    {
        using var response = await fixture.Client.GetAsync("loadtest/nothing-here", Token);

        await ProblemAssert.IsProblemAsync(response, HttpStatusCode.NotFound, "/loadtest/nothing-here", Token);
    }

    [Fact]
    public async Task Wrong_method_is_405_problem_json_with_allow_header()
    {
        using var response = await fixture.Client.PostAsync("loadtest/ping", new StringContent("x"), Token);

        await ProblemAssert.IsProblemAsync(response, HttpStatusCode.MethodNotAllowed, "POST", Token);
        Assert.Contains("GET", response.Content.Headers.Allow);
    }
}
