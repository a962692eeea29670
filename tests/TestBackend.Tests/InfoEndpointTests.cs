using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class InfoEndpointTests(BackendFixture fixture)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    // The endpoints the backend promises (its issue); written out here so that dropping one from the
    // catalog and the routes together still fails.
    private static readonly string[] Promised =
    [
        "GET /loadtest/ping", "GET /loadtest/get", "GET /loadtest/fast", "GET /loadtest/delay/{ms}",
        "POST /loadtest/echo", "GET /loadtest/info", "GET /loadtest/bytes/{n}", "GET /loadtest/status/{code}",
        "GET /loadtest/stats", "GET /loadtest/ws", "GET /loadtest/sse", "GET /healthz",
    ];

    [Fact]
    public async Task Info_lists_every_endpoint_with_a_description()
    {
        var listed = await GetListedAsync();

        Assert.Equal(Promised.Order(StringComparer.Ordinal), listed.Keys.Order(StringComparer.Ordinal));
        Assert.All(listed.Values, description => Assert.False(string.IsNullOrWhiteSpace(description)));
    }

    [Fact]
    public async Task Info_matches_the_routes_actually_mapped_and_every_GET_route_answers_HEAD_too()
    {
        var listed = await GetListedAsync();
        var mapped = fixture.Backend.Services.GetRequiredService<EndpointDataSource>().Endpoints
            .OfType<RouteEndpoint>()
            .SelectMany(endpoint => endpoint.Metadata.GetMetadata<HttpMethodMetadata>()!.HttpMethods
                .Select(method => $"{method} {endpoint.RoutePattern.RawText}"))
            .ToList();

        Assert.Equal(mapped.Where(route => !route.StartsWith("HEAD ", StringComparison.Ordinal)).Order(StringComparer.Ordinal),
            listed.Keys.Order(StringComparer.Ordinal));
        Assert.Equal(listed.Keys.Where(route => route.StartsWith("GET ", StringComparison.Ordinal)).Select(route => "HEAD " + route[4..]).Order(StringComparer.Ordinal),
            mapped.Where(route => route.StartsWith("HEAD ", StringComparison.Ordinal)).Order(StringComparer.Ordinal));
    }

    private async Task<Dictionary<string, string?>> GetListedAsync()
    {
        using var response = await fixture.Client.GetAsync("loadtest/info", Token);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);

        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync(Token));
        return json.RootElement.GetProperty("endpoints").EnumerateArray().ToDictionary(
            endpoint => $"{endpoint.GetProperty("method").GetString()} {endpoint.GetProperty("path").GetString()}",
            endpoint => endpoint.GetProperty("description").GetString());
    }
}
