using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;
using static Tunnel2.EndToEndTests.Access.CredentialsFileTests;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>
/// Visitor rules from the credentials file, checked on the public port before anything reaches an uplink: basic auth,
/// API keys, address allow and deny lists, and X-Forwarded-For believed only from a trusted proxy.
/// </summary>
public sealed class VisitorAccessTests : IAsyncLifetime
{
    /// <summary>From <c>htpasswd -nbB -C 4 alice wonderland</c>.</summary>
    private const string AliceHash = "$2y$04$BTDcgfGww9927df4MuFdlOSVk7rsICxhuU.4Pn/x/AxXuaoGL2yFa";
    private const string ApiKey = "visitor-api-key-0123456789";

    private readonly string _path = Path.Combine(Path.GetTempPath(), $"tunnel2-visitors-{Guid.NewGuid():N}.json");
    private readonly string _suffix = Guid.NewGuid().ToString("N")[..8];
    private readonly HttpClient _http = new();
    private TunnelStack? _trusting;
    private TunnelStack? _plain;
    private RecordingBackend? _backend;

    public async ValueTask InitializeAsync()
    {
        await File.WriteAllTextAsync(_path, CredentialsJson([], [
            $$"""{ "Sessions": "basic-*", "Users": { "alice": "{{AliceHash}}" } }""",
            $$"""{ "Sessions": "key-*", "ApiKeys": [ "{{TokenHash.Create(ApiKey)}}" ] }""",
            """{ "Sessions": "deny-*", "Deny": [ "127.0.0.0/8", "::1/128" ] }""",
            """{ "Sessions": "office-*", "Allow": [ "10.0.0.0/8", "2001:db8::/32" ] }""",
        ]));
        _backend = await RecordingBackend.StartAsync();
        _trusting = await TunnelStack.StartAsync($"--TunnelServer:CredentialsFile={_path}", "--ProxyEntry:TrustedProxies:0=127.0.0.1/32",
            "--ProxyEntry:RateLimits:FailedVisitorLoginsPerMinute=3", "--TunnelServer:ClientVisitorPolicies=true");
        _plain = await TunnelStack.StartAsync($"--TunnelServer:CredentialsFile={_path}", $"--TunnelServer:Token={TunnelStack.Token}");
    }

    public async ValueTask DisposeAsync()
    {
        _http.Dispose();
        foreach (TunnelStack? stack in new[] { _trusting, _plain })
        {
            if (stack is not null)
            {
                await stack.DisposeAsync();
            }
        }

        if (_backend is not null)
        {
            await _backend.DisposeAsync();
        }

        File.Delete(_path);
    }

    [Fact]
    public async Task Basic_auth_answers_401_with_a_challenge_until_the_right_password_and_the_backend_never_sees_it()
    {
        string session = await ServeAsync(_trusting!, "basic-");

        HttpResponseMessage none = await _http.SendAsync(Get(_trusting!, session));
        HttpResponseMessage wrong = await _http.SendAsync(Get(_trusting!, session, basic: "alice:Wonderland"));
        HttpResponseMessage right = await _http.SendAsync(Get(_trusting!, session, basic: "alice:wonderland"));

        await AssertProblemAsync(none, HttpStatusCode.Unauthorized, "urn:tunnel2:problem:visitor-unauthorized");
        Assert.Equal("Basic", Assert.Single(none.Headers.WwwAuthenticate).Scheme);
        await AssertProblemAsync(wrong, HttpStatusCode.Unauthorized, "urn:tunnel2:problem:visitor-unauthorized");
        Assert.Equal(HttpStatusCode.OK, right.StatusCode);
        RecordingBackend.ReceivedRequest received = Assert.Single(_backend!.Received, r => r.Target == $"/who?{session}");
        Assert.False(received.Headers.ContainsKey("Authorization"));
    }

    [Fact]
    public async Task An_API_key_is_taken_as_a_bearer_token_or_in_X_Api_Key()
    {
        string session = await ServeAsync(_trusting!, "key-");

        HttpRequestMessage bearer = Get(_trusting!, session);
        bearer.Headers.Authorization = new AuthenticationHeaderValue("Bearer", ApiKey);
        HttpRequestMessage header = Get(_trusting!, session);
        header.Headers.Add("X-Api-Key", ApiKey);
        HttpRequestMessage wrong = Get(_trusting!, session);
        wrong.Headers.Add("X-Api-Key", "not-the-key");

        Assert.Equal(HttpStatusCode.OK, (await _http.SendAsync(bearer)).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await _http.SendAsync(header)).StatusCode);
        HttpResponseMessage refused = await _http.SendAsync(wrong);
        await AssertProblemAsync(refused, HttpStatusCode.Unauthorized, "urn:tunnel2:problem:visitor-unauthorized");
        Assert.Equal("Bearer", Assert.Single(refused.Headers.WwwAuthenticate).Scheme);
        Assert.Equal(2, _backend!.Received.Count(r => r.Target == $"/who?{session}" && !r.Headers.ContainsKey("X-Api-Key") && !r.Headers.ContainsKey("Authorization")));
    }

    [Fact]
    public async Task A_denied_address_gets_403_and_its_request_reaches_no_backend()
    {
        string session = await ServeAsync(_plain!, "deny-");

        await AssertProblemAsync(await _http.SendAsync(Get(_plain!, session)), HttpStatusCode.Forbidden, "urn:tunnel2:problem:visitor-forbidden");
        Assert.DoesNotContain(_backend!.Received, r => r.Target == $"/who?{session}");
    }

    [Fact]
    public async Task X_Forwarded_For_counts_only_from_a_trusted_proxy()
    {
        string trusted = await ServeAsync(_trusting!, "office-");
        string untrusted = await ServeAsync(_plain!, "office-");

        HttpRequestMessage fromOffice = Get(_trusting!, trusted);
        fromOffice.Headers.Add("X-Forwarded-For", "10.1.2.3");
        HttpRequestMessage forged = Get(_plain!, untrusted);
        forged.Headers.Add("X-Forwarded-For", "10.1.2.3");

        Assert.Equal(HttpStatusCode.OK, (await _http.SendAsync(fromOffice)).StatusCode);
        await AssertProblemAsync(await _http.SendAsync(Get(_trusting!, trusted)), HttpStatusCode.Forbidden, "urn:tunnel2:problem:visitor-forbidden");
        await AssertProblemAsync(await _http.SendAsync(forged), HttpStatusCode.Forbidden, "urn:tunnel2:problem:visitor-forbidden");
        RecordingBackend.ReceivedRequest received = Assert.Single(_backend!.Received, r => r.Target == $"/who?{trusted}");
        Assert.Equal("10.1.2.3", received.Headers["X-Forwarded-For"]);
        Assert.DoesNotContain(_backend.Received, r => r.Target == $"/who?{untrusted}");
    }

    [Fact]
    public async Task An_address_out_of_wrong_passwords_gets_429_before_its_password_is_checked()
    {
        string session = await ServeAsync(_trusting!, "basic-");
        HttpRequestMessage Guess(int i)
        {
            HttpRequestMessage request = Get(_trusting!, session, basic: $"alice:guess-{i}");
            request.Headers.Add("X-Forwarded-For", "10.66.0.1"); // one visitor of its own, so the other tests' attempts do not count
            return request;
        }

        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(HttpStatusCode.Unauthorized, (await _http.SendAsync(Guess(i))).StatusCode);
        }

        HttpResponseMessage blocked = await _http.SendAsync(Guess(3));
        await AssertProblemAsync(blocked, HttpStatusCode.TooManyRequests, "urn:tunnel2:problem:too-many-failed-attempts");
        Assert.True(blocked.Headers.RetryAfter?.Delta > TimeSpan.Zero);
    }

    [Fact]
    public async Task A_crowd_of_1000_hostile_visitors_reaches_no_backend_gets_3_password_checks_per_address_and_50_rightful_ones_are_all_served()
    {
        string session = await ServeAsync(_trusting!, "basic-");
        using var http = new HttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = 200 });
        using var gate = new SemaphoreSlim(100);

        async Task<HttpStatusCode> SendAsync(string path, string visitor, string? basic)
        {
            await gate.WaitAsync();
            try
            {
                using HttpRequestMessage request = Get(_trusting!, session, basic);
                request.RequestUri = _trusting!.SessionUrl(session, path);
                request.Headers.Add("X-Forwarded-For", visitor);
                using HttpResponseMessage response = await http.SendAsync(request);
                return response.StatusCode;
            }
            finally
            {
                gate.Release();
            }
        }

        // 500 with no credentials from 100 addresses, 500 guessing passwords from 50 addresses (10 guesses each; 3 allowed
        // a minute here).
        Task<HttpStatusCode>[] hostile = [.. Enumerable.Range(0, 1000).Select(i => i % 2 == 0
            ? SendAsync($"/hostile/{i}", $"10.77.{i % 200 / 100}.{i % 100 + 1}", basic: null)
            : SendAsync($"/hostile/{i}", $"10.78.0.{i % 100 + 1}", basic: $"alice:guess-{i}"))];
        Task<HttpStatusCode>[] rightful = [.. Enumerable.Range(0, 50).Select(i => SendAsync($"/rightful/{i}", $"10.1.0.{i + 1}", "alice:wonderland"))];
        HttpStatusCode[] hostileAnswers = await Task.WhenAll(hostile);
        HttpStatusCode[] rightfulAnswers = await Task.WhenAll(rightful);

        Assert.All(rightfulAnswers, status => Assert.Equal(HttpStatusCode.OK, status));
        HttpStatusCode[] missing = [.. hostileAnswers.Where((_, i) => i % 2 == 0)];
        HttpStatusCode[] guesses = [.. hostileAnswers.Where((_, i) => i % 2 == 1)];
        Assert.All(missing, status => Assert.Equal(HttpStatusCode.Unauthorized, status));
        Assert.All(guesses, status => Assert.True(status is HttpStatusCode.Unauthorized or HttpStatusCode.TooManyRequests, status.ToString()));
        // Each address's count is taken before its password is checked, so even concurrent guesses get 3 checks each.
        Assert.Equal(50 * 3, guesses.Count(status => status == HttpStatusCode.Unauthorized));
        Assert.DoesNotContain(_backend!.Received, r => r.Target.StartsWith("/hostile/", StringComparison.Ordinal));
        Assert.Equal(50, _backend.Received.Count(r => r.Target.StartsWith("/rightful/", StringComparison.Ordinal) && !r.Headers.ContainsKey("Authorization")));
    }

    [Fact]
    public async Task A_session_no_rule_names_stays_open()
    {
        string session = await ServeAsync(_plain!, "open-");

        Assert.Equal(HttpStatusCode.OK, (await _http.SendAsync(Get(_plain!, session))).StatusCode);
    }

    [Fact]
    public async Task A_client_declares_basic_auth_for_its_session_where_the_server_allows_it()
    {
        string session = await ServeAsync(_trusting!, "declared-", "--basic-auth", "carol:rabbit-hole", "--cidr-deny", "10.99.0.0/16");

        HttpRequestMessage denied = Get(_trusting!, session, basic: "carol:rabbit-hole");
        denied.Headers.Add("X-Forwarded-For", "10.99.1.1");

        await AssertProblemAsync(await _http.SendAsync(Get(_trusting!, session)), HttpStatusCode.Unauthorized, "urn:tunnel2:problem:visitor-unauthorized");
        await AssertProblemAsync(await _http.SendAsync(Get(_trusting!, session, basic: "carol:wrong-password")), HttpStatusCode.Unauthorized, "urn:tunnel2:problem:visitor-unauthorized");
        await AssertProblemAsync(await _http.SendAsync(denied), HttpStatusCode.Forbidden, "urn:tunnel2:problem:visitor-forbidden");
        Assert.Equal(HttpStatusCode.OK, (await _http.SendAsync(Get(_trusting!, session, basic: "carol:rabbit-hole"))).StatusCode);
        Assert.False(Assert.Single(_backend!.Received, r => r.Target == $"/who?{session}").Headers.ContainsKey("Authorization"));
    }

    [Fact]
    public async Task A_client_declaring_rules_where_the_server_takes_none_is_refused_with_403_and_stops()
    {
        string session = "declared-" + _suffix;
        await using TunnelClientHandle client = _plain!.StartClientWithoutWaiting(session, _backend!.Url, extraArgs: ["--basic-auth", "carol:rabbit-hole"]);
        await client.StartAsync();

        await Eventually.WaitUntilAsync(() => client.Stopping.IsCancellationRequested, "the client gives up on a 403");
        Assert.Equal(3, client.Status.ExitCode);
        Assert.Empty(_plain.Registry.GetUplinks(session));
    }

    private async Task<string> ServeAsync(TunnelStack stack, string prefix, params string[] clientArgs)
    {
        string session = prefix + _suffix + "-" + Guid.NewGuid().ToString("N")[..6];
        await stack.StartClientAsync(session, _backend!.Url, extraArgs: clientArgs);
        return session;
    }

    private static HttpRequestMessage Get(TunnelStack stack, string session, string? basic = null)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, $"/who?{session}"));
        if (basic is not null)
        {
            request.Headers.Authorization = new AuthenticationHeaderValue("Basic", Convert.ToBase64String(Encoding.UTF8.GetBytes(basic)));
        }

        return request;
    }

    private static async Task AssertProblemAsync(HttpResponseMessage response, HttpStatusCode status, string type)
    {
        Assert.Equal(status, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        using JsonDocument problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal(type, problem.RootElement.GetProperty("type").GetString());
    }
}
