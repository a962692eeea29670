using System.Net;
using System.Text.Json;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class RequestDescriptionTests(BackendFixture fixture)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Get_describes_method_url_args_headers_and_origin()
    {
        const string target = "loadtest/get?a=1&b=x&b=y%20z&empty=";
        using var request = new HttpRequestMessage(HttpMethod.Get, target);
        request.Headers.Add("X-Tunnel2-Test", "custom value");
        request.Headers.Add("X-Multi", ["one", "two"]);

        using var response = await fixture.Client.SendAsync(request, Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        var body = await response.Content.ReadAsStringAsync(Token);
        Assert.Equal(System.Text.Encoding.UTF8.GetByteCount(body), response.Content.Headers.ContentLength);

        using var json = JsonDocument.Parse(body);
        var root = json.RootElement;
        Assert.Equal("GET", root.GetProperty("method").GetString());
        Assert.Equal(new Uri(fixture.Backend.BaseAddress, target).OriginalString, root.GetProperty("url").GetString());

        var args = root.GetProperty("args");
        Assert.Equal("1", args.GetProperty("a").GetString());
        Assert.Equal(["x", "y z"], args.GetProperty("b").EnumerateArray().Select(value => value.GetString()));
        Assert.Equal(string.Empty, args.GetProperty("empty").GetString());

        var headers = root.GetProperty("headers").EnumerateObject()
            .ToDictionary(header => header.Name, header => header.Value.GetString(), StringComparer.OrdinalIgnoreCase);
        Assert.Equal("custom value", headers["X-Tunnel2-Test"]);
        Assert.Equal("one, two", headers["X-Multi"]);
        Assert.Equal(fixture.Backend.BaseAddress.Authority, headers["Host"]);

        Assert.Equal("127.0.0.1", root.GetProperty("origin").GetString());
    }

    [Fact]
    public async Task Get_without_query_has_empty_args()
    {
        using var response = await fixture.Client.GetAsync("loadtest/get", Token);

        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync(Token));
        Assert.Equal(JsonValueKind.Object, json.RootElement.GetProperty("args").ValueKind);
        Assert.Empty(json.RootElement.GetProperty("args").EnumerateObject());
        Assert.EndsWith("/loadtest/get", json.RootElement.GetProperty("url").GetString(), StringComparison.Ordinal);
    }
}
