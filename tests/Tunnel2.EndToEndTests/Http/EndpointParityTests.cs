using System.Net;
using System.Text;
using System.Text.Json;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>Every TestBackend endpoint answers the same through the tunnel as directly, apart from the forwarding headers.</summary>
[Collection(TunnelCollection.Name)]
public sealed class EndpointParityTests(TunnelStackFixture fixture)
{
    private static readonly string[] ForwardingHeaders = ["X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Prefix"];

    [Theory]
    [InlineData("GET", "/loadtest/ping")]
    [InlineData("GET", "/loadtest/fast")]
    [InlineData("GET", "/loadtest/info")]
    [InlineData("GET", "/loadtest/delay/20")]
    [InlineData("GET", "/loadtest/bytes/100000")]
    [InlineData("GET", "/loadtest/bytes/0")]
    [InlineData("GET", "/loadtest/status/418")]
    [InlineData("GET", "/loadtest/status/204")]
    [InlineData("GET", "/loadtest/status/500")]
    [InlineData("GET", "/healthz")]
    [InlineData("GET", "/loadtest/delay/abc")]
    [InlineData("GET", "/loadtest/delay/-1")]
    [InlineData("GET", "/loadtest/bytes/x")]
    [InlineData("GET", "/loadtest/status/abc")]
    [InlineData("GET", "/no/such/endpoint")]
    [InlineData("POST", "/loadtest/ping")]
    public async Task Answer_matches_the_direct_answer(string method, string pathAndQuery)
    {
        (HttpStatusCode directStatus, string? directType, byte[] directBody) = await SendAsync(method, fixture.DirectUrl(pathAndQuery));
        (HttpStatusCode tunnelStatus, string? tunnelType, byte[] tunnelBody) = await SendAsync(method, fixture.Url(pathAndQuery));

        Assert.Equal(directStatus, tunnelStatus);
        Assert.Equal(directType, tunnelType);
        Assert.Equal(WithoutTraceIds(directBody), WithoutTraceIds(tunnelBody));
    }

    [Fact]
    public async Task Get_describes_the_same_request_plus_forwarding_headers()
    {
        const string query = "?a=1&b=x&b=y&enc=%20%2F";
        JsonElement direct = await GetJsonAsync(fixture.DirectUrl("/loadtest/get" + query));
        JsonElement tunnel = await GetJsonAsync(fixture.Url("/loadtest/get" + query));

        Assert.Equal(direct.GetProperty("method").GetString(), tunnel.GetProperty("method").GetString());
        // The same path and query; the authority is the Host each got: the backend's own directly, the caller's through the tunnel.
        Uri directUrl = new(direct.GetProperty("url").GetString()!);
        Uri tunnelUrl = new(tunnel.GetProperty("url").GetString()!);
        Assert.Equal(directUrl.PathAndQuery, tunnelUrl.PathAndQuery);
        Assert.Equal(fixture.Url("/").Authority, tunnelUrl.Authority);
        Assert.Equal(direct.GetProperty("args").GetRawText(), tunnel.GetProperty("args").GetRawText());
        Assert.Equal(direct.GetProperty("origin").GetString(), tunnel.GetProperty("origin").GetString());

        Dictionary<string, string> directHeaders = Headers(direct);
        Dictionary<string, string> tunnelHeaders = Headers(tunnel);
        foreach (string name in ForwardingHeaders)
        {
            Assert.True(tunnelHeaders.Remove(name), $"{name} is missing through the tunnel");
        }

        Assert.Equal($"\"{directUrl.Authority}\"", directHeaders["Host"]); // as JSON text
        Assert.Equal($"\"{tunnelUrl.Authority}\"", tunnelHeaders["Host"]);
        directHeaders.Remove("Host");
        tunnelHeaders.Remove("Host");

        Assert.Equal(directHeaders.OrderBy(h => h.Key), tunnelHeaders.OrderBy(h => h.Key));
    }

    [Fact]
    public async Task Echo_returns_the_body_and_content_type()
    {
        byte[] payload = Encoding.UTF8.GetBytes("{\"hello\":\"tunnel ✓\"}");
        using var content = new ByteArrayContent(payload);
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/json");

        using HttpResponseMessage response = await fixture.Http.PostAsync(fixture.Url("/loadtest/echo"), content);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal(payload, await response.Content.ReadAsByteArrayAsync());
    }

    private async Task<(HttpStatusCode Status, string? ContentType, byte[] Body)> SendAsync(string method, Uri url)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), url);
        using HttpResponseMessage response = await fixture.Http.SendAsync(request);
        return (response.StatusCode, response.Content.Headers.ContentType?.ToString(), await response.Content.ReadAsByteArrayAsync());
    }

    private async Task<JsonElement> GetJsonAsync(Uri url)
    {
        using HttpResponseMessage response = await fixture.Http.GetAsync(url);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement.Clone();
    }

    private static Dictionary<string, string> Headers(JsonElement described)
    {
        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (JsonProperty header in described.GetProperty("headers").EnumerateObject())
        {
            headers[header.Name] = header.Value.GetRawText();
        }

        return headers;
    }

    /// <summary>Problem documents carry a per-request trace id; everything else must match byte for byte.</summary>
    private static string WithoutTraceIds(byte[] body) =>
        System.Text.RegularExpressions.Regex.Replace(Encoding.UTF8.GetString(body), "\"traceId\":\"[^\"]*\"", "\"traceId\":\"-\"");
}
