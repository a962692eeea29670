using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>HTTP details a user of a reverse proxy relies on, checked against a backend that reports what it received.</summary>
[Collection(TunnelCollection.Name)]
public sealed class HttpSemanticsTests(TunnelStackFixture fixture) : IAsyncLifetime
{
    private readonly string Session = "semantics-" + Guid.NewGuid().ToString("N");
    private SemanticsBackend? _backend;
    private TunnelClientHandle? _client;

    public async ValueTask InitializeAsync()
    {
        _backend = await SemanticsBackend.StartAsync();
        _client = await fixture.Stack.StartClientAsync(Session, _backend.Url);
    }

    public async ValueTask DisposeAsync()
    {
        if (_client is not null)
        {
            await _client.DisposeAsync();
        }

        if (_backend is not null)
        {
            await _backend.DisposeAsync();
        }
    }

    [Fact]
    public async Task Encoded_path_and_query_arrive_unchanged_with_the_prefix_stripped()
    {
        string[] lines = await EchoAsync("/raw/a%2Fb%20c/%E2%9C%93?q=%E2%9C%93&x=a+b&y=%2F%3F%26&empty=");

        Assert.Equal("/raw/a%2Fb%20c/%E2%9C%93?q=%E2%9C%93&x=a+b&y=%2F%3F%26&empty=", lines[0]);
        Assert.Contains($"X-Forwarded-Prefix: /session/{Session}", lines);
    }

    [Fact]
    public async Task Session_root_and_bare_query_map_to_the_backend_root()
    {
        Assert.Equal("/", (await EchoAsync("/"))[0]);
        Assert.Equal("/?a=1", (await EchoAsync("/?a=1"))[0]);
    }

    [Theory]
    [InlineData("GET", "", 301, "")]
    [InlineData("GET", "?a=1&b=%20", 301, "?a=1&b=%20")]
    [InlineData("HEAD", "", 301, "")]
    [InlineData("POST", "?x", 308, "?x")]
    public async Task The_session_root_without_its_slash_redirects_to_it_with_the_query_kept(string method, string query, int status, string keptQuery)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), new Uri($"{fixture.Stack.PublicUrl.ToString().TrimEnd('/')}/session/{Session}{query}"));
        using HttpResponseMessage response = await fixture.Http.SendAsync(request);

        Assert.Equal(status, (int)response.StatusCode);
        Assert.Equal($"/session/{Session}/{keptQuery}", response.Headers.Location?.OriginalString);
    }

    [Fact]
    public async Task A_redirect_to_the_backends_own_origin_becomes_the_public_URL_under_the_session()
    {
        using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(Session, "/redirect/absolute"));

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.Equal(fixture.Stack.SessionUrl(Session, "/index.html?from=absolute"), response.Headers.Location);
    }

    [Fact]
    public async Task A_root_relative_redirect_refresh_and_cookie_path_move_under_the_session()
    {
        using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(Session, "/redirect/root"));

        Assert.Equal(HttpStatusCode.Found, response.StatusCode);
        Assert.Equal($"/session/{Session}/login?next=%2Fx", response.Headers.Location?.OriginalString);
        Assert.Equal($"0; url=/session/{Session}/login", response.Headers.GetValues("Refresh").Single());
        Assert.Equal($"session=s1; Path=/session/{Session}/; HttpOnly", response.Headers.GetValues("Set-Cookie").Single());
    }

    [Fact]
    public async Task A_client_with_path_rewriting_off_passes_redirects_and_cookies_as_the_backend_sent_them()
    {
        string session = Session + "-verbatim";
        await using TunnelClientHandle client = await fixture.Stack.StartClientAsync(session, _backend!.Url, extraArgs: ["--rewrite-paths", "false"]);

        using HttpResponseMessage root = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(session, "/redirect/root"));
        using HttpResponseMessage absolute = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(session, "/redirect/absolute"));

        Assert.Equal("/login?next=%2Fx", root.Headers.Location?.OriginalString);
        Assert.Equal("session=s1; Path=/; HttpOnly", root.Headers.GetValues("Set-Cookie").Single());
        Assert.Equal(new Uri(fixture.Stack.PublicUrl, "/index.html?from=absolute"), absolute.Headers.Location); // built on the caller's Host
    }

    [Fact]
    public async Task A_redirect_to_the_backends_own_origin_under_host_header_rewrite_becomes_the_public_URL_under_the_session()
    {
        string session = Session + "-rewrite";
        await using TunnelClientHandle client = await fixture.Stack.StartClientAsync(session, _backend!.Url, extraArgs: ["--host-header", "rewrite"]);

        using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(session, "/redirect/absolute"));

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.Equal(fixture.Stack.SessionUrl(session, "/index.html?from=absolute"), response.Headers.Location);
    }

    [Fact]
    public async Task Forwarded_headers_are_set_and_spoofed_ones_replaced()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, fixture.Stack.SessionUrl(Session, "/headers"));
        request.Headers.TryAddWithoutValidation("X-Forwarded-For", "6.6.6.6");
        request.Headers.TryAddWithoutValidation("X-Forwarded-Host", "evil.example");

        string[] lines = await SendForLinesAsync(request);

        Assert.Contains("X-Forwarded-For: 127.0.0.1", lines);
        Assert.Contains("X-Forwarded-Proto: http", lines);
        Assert.Contains($"X-Forwarded-Host: {fixture.Stack.PublicUrl.Authority}", lines);
        Assert.DoesNotContain(lines, line => line.Contains("6.6.6.6", StringComparison.Ordinal) || line.Contains("evil.example", StringComparison.Ordinal));
        Assert.Contains($"Host: {fixture.Stack.PublicUrl.Authority}", lines); // the caller's (--host-header preserve)
    }

    [Fact]
    public async Task Hop_by_hop_headers_are_dropped_and_repeated_headers_survive()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, fixture.Stack.SessionUrl(Session, "/headers"));
        request.Headers.TryAddWithoutValidation("Connection", "X-Hop");
        request.Headers.TryAddWithoutValidation("X-Hop", "should-not-pass");
        request.Headers.TryAddWithoutValidation("Keep-Alive", "timeout=5");
        request.Headers.TryAddWithoutValidation("Proxy-Authorization", "Basic abc");
        request.Headers.TryAddWithoutValidation("X-Multi", ["one", "two"]);

        string[] lines = await SendForLinesAsync(request);

        Assert.DoesNotContain(lines, line => line.StartsWith("X-Hop:", StringComparison.OrdinalIgnoreCase));
        Assert.DoesNotContain(lines, line => line.StartsWith("Keep-Alive:", StringComparison.OrdinalIgnoreCase));
        Assert.DoesNotContain(lines, line => line.StartsWith("Proxy-Authorization:", StringComparison.OrdinalIgnoreCase));
        Assert.Contains(lines, line => line is "X-Multi: one, two" or "X-Multi: one");
        Assert.Contains(lines, line => line is "X-Multi: one, two" or "X-Multi: two");
    }

    [Fact]
    public async Task Several_set_cookie_headers_stay_separate()
    {
        using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(Session, "/cookies"));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal([$"a=1; Path=/session/{Session}/", $"b=2; Path=/session/{Session}/; HttpOnly"], response.Headers.GetValues("Set-Cookie").ToArray());
    }

    [Fact]
    public async Task Not_modified_carries_no_body_and_keeps_its_validator()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, fixture.Stack.SessionUrl(Session, "/etag"));
        request.Headers.TryAddWithoutValidation("If-None-Match", "\"v1\"");

        using HttpResponseMessage response = await fixture.Http.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotModified, response.StatusCode);
        Assert.Equal("\"v1\"", response.Headers.ETag?.Tag);
        Assert.Empty(await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Head_carries_the_length_but_no_body()
    {
        using var request = new HttpRequestMessage(HttpMethod.Head, fixture.Stack.SessionUrl(Session, "/head"));

        using HttpResponseMessage response = await fixture.Http.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(11, response.Content.Headers.ContentLength);
        Assert.Empty(await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task A_chunked_answer_arrives_whole()
    {
        using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(Session, "/chunked"));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("part0;part1;part2;part3;part4;", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task A_backend_that_drops_mid_response_never_looks_complete()
    {
        // Depending on whether the first bytes reached the caller before the failure, the caller gets a clean 502
        // or an aborted body; never a 200 whose body ends as if complete.
        using HttpResponseMessage response = await fixture.Http.GetAsync(fixture.Stack.SessionUrl(Session, "/truncated"), HttpCompletionOption.ResponseHeadersRead);
        if (response.StatusCode == HttpStatusCode.BadGateway)
        {
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
            return;
        }

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Stream body = await response.Content.ReadAsStreamAsync();
        await Assert.ThrowsAnyAsync<IOException>(async () => await body.CopyToAsync(Stream.Null));
    }

    private async Task<string[]> EchoAsync(string pathAndQuery)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri($"{fixture.Stack.PublicUrl.ToString().TrimEnd('/')}/session/{Session}{pathAndQuery}"));
        return await SendForLinesAsync(request);
    }

    private async Task<string[]> SendForLinesAsync(HttpRequestMessage request)
    {
        using HttpResponseMessage response = await fixture.Http.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await response.Content.ReadAsStringAsync()).Split('\n');
    }
}
