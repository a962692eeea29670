using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// Host routing (<c>--host-suffix</c>, custom domains): a session's own host name reaches its backend with the path
/// unchanged, beside path routing on the same server.
/// </summary>
public sealed class HostRoutingTests : IAsyncLifetime
{
    private const string Suffix = "tunnel.test";
    private const string CustomDomain = "app.example.org";

    private readonly string _session = "host-" + Guid.NewGuid().ToString("N")[..12];
    private readonly HttpClient _http = new(new SocketsHttpHandler { UseCookies = false, AllowAutoRedirect = false }) { Timeout = TimeSpan.FromSeconds(30) };
    private TunnelStack? _stack;

    private TunnelStack Stack => _stack!;

    public async ValueTask InitializeAsync()
    {
        _stack = await TunnelStack.StartAsync("--host-suffix", Suffix, $"--ProxyEntry:Routing:Hosts:{CustomDomain}={_session}");
        await _stack.StartClientAsync(_session);
    }

    public async ValueTask DisposeAsync()
    {
        _http.Dispose();
        if (_stack is not null)
        {
            await _stack.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_session_host_reaches_its_backend_with_the_path_and_query_unchanged()
    {
        using HttpResponseMessage response = await SendAsync($"{_session}.{Suffix}", "/loadtest/get?x=1&y=%2F");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using JsonDocument seen = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        // The backend builds its URL from the Host it got: the caller's (--host-header preserve, the default).
        Assert.Equal($"http://{_session}.{Suffix}:{Stack.PublicUrl.Port}/loadtest/get?x=1&y=%2F",
            seen.RootElement.GetProperty("url").GetString());
        JsonElement headers = seen.RootElement.GetProperty("headers");
        Assert.Equal($"{_session}.{Suffix}:{Stack.PublicUrl.Port}", headers.GetProperty("X-Forwarded-Host").GetString());
        Assert.False(headers.TryGetProperty("X-Forwarded-Prefix", out _), "no prefix was stripped, so none is announced");
    }

    [Fact]
    public async Task The_host_compares_without_case_or_a_trailing_dot()
    {
        using HttpResponseMessage upper = await SendAsync($"{_session}.TUNNEL.Test.", "/loadtest/ping");

        Assert.Equal(HttpStatusCode.OK, upper.StatusCode);
        Assert.Equal("pong", await upper.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task On_a_session_host_every_path_is_the_backends_and_the_servers_own_paths_stay_on_other_hosts()
    {
        // Not stripped and not taken for path routing: the backend itself answers that it has no such path.
        using HttpResponseMessage sessionPath = await SendAsync($"{_session}.{Suffix}", $"/session/{_session}/loadtest/ping");
        Assert.Equal(HttpStatusCode.NotFound, sessionPath.StatusCode);
        Assert.DoesNotContain("urn:tunnel2:", await sessionPath.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        using HttpResponseMessage serverHealth = await SendAsync(Suffix, "/healthz");
        Assert.Equal(HttpStatusCode.OK, serverHealth.StatusCode);
    }

    [Fact]
    public async Task Path_routing_keeps_working_beside_host_routing()
    {
        using HttpResponseMessage byPath = await _http.GetAsync(Stack.SessionUrl(_session, "/loadtest/ping"));
        using HttpResponseMessage onApex = await SendAsync(Suffix, $"/session/{_session}/loadtest/ping");

        Assert.Equal("pong", await byPath.Content.ReadAsStringAsync());
        Assert.Equal("pong", await onApex.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task A_custom_domain_reaches_the_session_it_is_mapped_to()
    {
        using HttpResponseMessage response = await SendAsync(CustomDomain, "/loadtest/ping");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("pong", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task An_unknown_host_under_the_suffix_gets_a_404_problem_that_names_the_host()
    {
        string host = $"nobody-here.{Suffix}";
        using HttpResponseMessage response = await SendAsync(host, "/anything");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        using JsonDocument problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal("urn:tunnel2:problem:tunnel-not-found", problem.RootElement.GetProperty("type").GetString());
        Assert.Contains($"host '{host}'", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Curl_with_resolve_reaches_the_session_by_its_host_name()
    {
        string host = $"{_session}.{Suffix}";
        int port = Stack.PublicUrl.Port;
        using var curl = Process.Start(new ProcessStartInfo("curl",
            ["--silent", "--show-error", "--max-time", "20", "--resolve", $"{host}:{port}:127.0.0.1", "--write-out", "\n%{http_code}", $"http://{host}:{port}/loadtest/ping"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        })!;
        string output = await curl.StandardOutput.ReadToEndAsync();
        await curl.WaitForExitAsync();

        Assert.Equal(0, curl.ExitCode);
        Assert.Equal("pong\n200", output);
    }

    private Task<HttpResponseMessage> SendAsync(string host, string pathAndQuery)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, new Uri(Stack.PublicUrl, pathAndQuery));
        request.Headers.Host = host.EndsWith('.') || host == Suffix || host == CustomDomain ? host : $"{host}:{Stack.PublicUrl.Port}";
        return _http.SendAsync(request);
    }
}
