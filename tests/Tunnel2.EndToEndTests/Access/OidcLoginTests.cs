using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.Playwright;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>
/// Single sign-on for visitors, as deployed: a real OpenID provider (oidc-provider, started here), TunnelServer and
/// TunnelClient processes (a <see cref="LoginStack"/>, whose server trusts 127.0.0.1 as a proxy and allows 3 failed
/// logins a minute), and headless Chromium logging in through the provider's own pages. The session takes
/// accounts of example.com; the login cookie's keys live in a directory this test shares with the server, as the
/// nodes of a cluster do, so the test can also make cookies as another node would (and expired ones).
/// </summary>
public sealed class OidcLoginTests : IAsyncLifetime
{
    private readonly HttpClient _http = CallerHttp.Create();
    private OidcProvider? _provider;
    private LoginStack? _login;

    private ProcessStack Stack => _login!.Stack;

    private string Session => _login!.Session;

    public async ValueTask InitializeAsync()
    {
        _provider = await OidcProvider.StartAsync();
        _login = await LoginStack.StartAsync(_provider.Issuer,
            ["--ProxyEntry:TrustedProxies:0=127.0.0.1/32", "--ProxyEntry:RateLimits:FailedVisitorLoginsPerMinute=3"]);
    }

    public async ValueTask DisposeAsync()
    {
        _http.Dispose();
        if (_login is not null)
        {
            await _login.DisposeAsync();
        }

        if (_provider is not null)
        {
            await _provider.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_browser_logs_in_at_the_provider_reaches_the_app_as_itself_and_logs_out()
    {
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using IPlaywright _ = playwright;
        await using IBrowser __ = browser;
        IBrowserContext context = await browser.NewContextAsync();
        IPage page = await context.NewPageAsync();
        var callbacks = new List<string>();
        page.Request += (_, request) =>
        {
            if (request.Url.Contains(OidcRule.CallbackPath, StringComparison.Ordinal))
            {
                lock (callbacks)
                {
                    callbacks.Add(request.Url);
                }
            }
        };

        string app = Stack.SessionUrl("/loadtest/get?page=1").ToString();
        await LogInAsync(page, app, "alice@example.com");

        Dictionary<string, string> headers = BackendSaw.Headers(await page.InnerTextAsync("body"));
        Assert.Equal(("alice@example.com", "alice@example.com"), (headers["X-Forwarded-Email"], headers["X-Forwarded-User"]));
        Assert.False(headers.TryGetValue("Cookie", out string? cookieHeader) && cookieHeader.Contains(OidcRule.CookieName, StringComparison.Ordinal),
            "the login cookie stays with the tunnel");
        BrowserContextCookiesResult cookie = Assert.Single(await context.CookiesAsync(), c => c.Name == OidcRule.CookieName);
        Assert.True(cookie.HttpOnly);
        Assert.Equal($"/session/{Session}/", cookie.Path);
        Assert.False(cookie.Secure); // plain http here; over TLS the cookie is Secure (CookieSecurePolicy.SameAsRequest)

        // The state of a finished login is spent: the same callback again does not log anyone in.
        string callback = Assert.Single(callbacks);
        Assert.Contains("state=", callback, StringComparison.Ordinal);
        using HttpResponseMessage replayed = await _http.GetAsync(new Uri(callback));
        await AssertProblemAsync(replayed, HttpStatusCode.Unauthorized, "urn:tunnel2:problem:visitor-unauthorized", "The login did not complete");
        IResponse? again = await page.GotoAsync(callback);
        Assert.Equal(401, again!.Status);

        IResponse? logout = await page.GotoAsync(Stack.SessionUrl(OidcRule.LogoutPath).ToString());
        Assert.Equal(200, logout!.Status);
        Assert.DoesNotContain(await context.CookiesAsync(), c => c.Name == OidcRule.CookieName);
    }

    [Fact]
    public async Task A_login_at_one_node_opens_the_session_on_another_node_that_shares_the_keys_directory()
    {
        await using LoginNode nodeB = await _login!.StartNodeAsync("b", "http://127.0.0.1:0");
        Uri atB = new(nodeB.PublicUrl, $"/session/{Session}/loadtest/get?node=b");
        await Eventually.WaitUntilAsync(async () =>
        {
            using HttpResponseMessage probe = await _http.GetAsync(atB);
            return probe.StatusCode == HttpStatusCode.Redirect; // node B serves the session and asks for the login
        }, "node B serves the session");
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using IPlaywright _ = playwright;
        await using IBrowser __ = browser;
        IBrowserContext context = await browser.NewContextAsync();
        IPage page = await context.NewPageAsync();

        await LogInAsync(page, Stack.SessionUrl("/loadtest/get?node=a").ToString(), "dana@example.com");
        IResponse? onB = await page.GotoAsync(atB.ToString()); // the same cookie (cookies do not name a port), read by node B

        Assert.Equal(200, onB!.Status);
        Assert.Equal(atB.ToString(), page.Url);
        Assert.Equal("dana@example.com", BackendSaw.Headers(await page.InnerTextAsync("body"))["X-Forwarded-Email"]);
    }

    [Fact]
    public async Task In_host_mode_the_login_lives_on_the_sessions_host_and_its_cookie_is_the_hosts()
    {
        await using LoginNode hostNode = await _login!.StartNodeAsync("host", "http://127.0.0.1:0", "--host-suffix", "apps.test");
        Uri publicHost = hostNode.PublicUrl;
        var site = new Uri($"http://{Session}.apps.test:{publicHost.Port}/");
        await Eventually.WaitUntilAsync(async () =>
        {
            using var probe = new HttpRequestMessage(HttpMethod.Get, new Uri(publicHost, "/loadtest/get"));
            probe.Headers.Host = site.Authority;
            using HttpResponseMessage answer = await _http.SendAsync(probe);
            return answer.StatusCode == HttpStatusCode.Redirect;
        }, "the host-mode node serves the session");
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync("--host-resolver-rules=MAP *.apps.test 127.0.0.1");
        using IPlaywright _ = playwright;
        await using IBrowser __ = browser;
        IBrowserContext context = await browser.NewContextAsync();
        IPage page = await context.NewPageAsync();

        IResponse? answer = await _provider!.LogInAsync(page, new Uri(site, "/loadtest/get?host=1").ToString(), "frank@example.com", site);

        Assert.Equal(200, answer!.Status);
        Assert.Equal("frank@example.com", BackendSaw.Headers(await page.InnerTextAsync("body"))["X-Forwarded-Email"]);
        BrowserContextCookiesResult cookie = Assert.Single(await context.CookiesAsync(), c => c.Name == OidcRule.CookieName);
        Assert.Equal(($"{Session}.apps.test", "/"), (cookie.Domain, cookie.Path)); // the session's host alone, no Domain attribute
    }

    [Fact]
    public async Task Over_TLS_the_login_cookie_is_Secure()
    {
        using var certificates = new TestCertificates();
        TestCertificates.PemPair certificate = certificates.IssueServer();
        await using LoginNode tlsNode = await _login!.StartNodeAsync("tls", "https://127.0.0.1:0",
            "--certificate", certificate.CertificatePath, "--certificate-key", certificate.KeyPath);
        Uri publicTls = tlsNode.PublicUrl;
        Uri app = new(publicTls, $"/session/{Session}/loadtest/get?tls=1");
        using var trusting = new HttpClient(new SocketsHttpHandler
        {
            AllowAutoRedirect = false,
            SslOptions =
            {
                RemoteCertificateValidationCallback = (_, presented, _, _) =>
                    presented is not null && presented.GetCertHashString(System.Security.Cryptography.HashAlgorithmName.SHA256) == certificate.Sha256,
            },
        });
        await Eventually.WaitUntilAsync(async () =>
        {
            using HttpResponseMessage probe = await trusting.GetAsync(app);
            return probe.StatusCode == HttpStatusCode.Redirect;
        }, "the TLS node serves the session");
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using IPlaywright _ = playwright;
        await using IBrowser __ = browser;
        IBrowserContext context = await browser.NewContextAsync(new BrowserNewContextOptions { IgnoreHTTPSErrors = true });
        IPage page = await context.NewPageAsync();

        IResponse? answer = await _provider!.LogInAsync(page, app.ToString(), "erin@example.com", publicTls);

        Assert.Equal(200, answer!.Status);
        BrowserContextCookiesResult cookie = Assert.Single(await context.CookiesAsync(), c => c.Name == OidcRule.CookieName);
        Assert.True(cookie.Secure);
        Assert.True(cookie.HttpOnly);
        Assert.Equal(SameSiteAttribute.Lax, cookie.SameSite);
    }

    [Fact]
    public async Task A_server_whose_credentials_file_puts_a_login_on_a_TCP_session_refuses_to_start_and_says_why()
    {
        string path = Path.Combine(Path.GetTempPath(), $"tunnel2-oidc-tcp-{Guid.NewGuid():N}.json");
        await File.WriteAllTextAsync(path, $$"""
            { "Clients": [], "TcpPorts": { "lab-db": 15432 },
              "Visitors": [ { "Sessions": "lab-*", "Oidc": { "Authority": "{{_provider!.Issuer}}", "ClientId": "c", "ClientSecret": "s",
                              "AllowedEmailDomains": [ "example.com" ] } } ] }
            """);
        try
        {
            await using TunnelProcess server = TunnelProcess.StartServer("server-tcp-login",
                ["--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token, $"--TunnelServer:CredentialsFile={path}"]);

            Assert.NotEqual(0, await server.WaitForExitAsync(TimeSpan.FromSeconds(30)));
            Assert.Contains("an Oidc login cannot guard session 'lab-db', which takes raw TCP callers", server.Output, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public async Task An_account_of_another_email_domain_is_turned_away_after_the_login_and_gets_no_cookie()
    {
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using IPlaywright _ = playwright;
        await using IBrowser __ = browser;
        IBrowserContext context = await browser.NewContextAsync();
        IPage page = await context.NewPageAsync();

        IResponse? answer = await LogInAsync(page, Stack.SessionUrl("/loadtest/get").ToString(), "eve@evil.example");

        Assert.Equal(403, answer!.Status);
        Assert.Contains("eve@evil.example may not visit this session", await page.InnerTextAsync("body"), StringComparison.Ordinal);
        Assert.DoesNotContain(await context.CookiesAsync(), c => c.Name == OidcRule.CookieName);
    }

    [Fact]
    public async Task A_cookie_that_is_tampered_expired_or_from_other_keys_is_sent_to_the_login_and_one_from_the_shared_keys_gets_in()
    {
        string good = _login!.Cookie("bob@example.com", TimeSpan.FromMinutes(30));
        string value = good[(OidcRule.CookieName.Length + 1)..];
        string tampered = OidcRule.CookieName + "=" + value[..40] + (value[40] == 'A' ? 'B' : 'A') + value[41..];
        string expired = _login.Cookie("bob@example.com", TimeSpan.FromMinutes(-5));
        string otherKeys = _login.Cookie(new EphemeralDataProtectionProvider(), "bob@example.com", TimeSpan.FromMinutes(30));

        using (HttpResponseMessage admitted = await SendAsync(good, "10.5.0.1", forgeIdentity: true))
        {
            Dictionary<string, string> headers = await BackendSaw.HeadersAsync(admitted);
            Assert.Equal(("bob@example.com", "bob@example.com"), // the caller's own identity headers are replaced, not passed
                (headers["X-Forwarded-User"], headers["X-Forwarded-Email"]));
        }

        foreach ((string cookie, string visitor) in new[] { (tampered, "10.5.0.2"), (expired, "10.5.0.3"), (otherKeys, "10.5.0.4"), (string.Empty, "10.5.0.5") })
        {
            using HttpResponseMessage refused = await SendAsync(cookie, visitor);
            Assert.Equal(HttpStatusCode.Redirect, refused.StatusCode);
            Assert.StartsWith(_provider!.Issuer + "/auth?", refused.Headers.Location!.ToString(), StringComparison.Ordinal);
            // The handler pushes its parameters (PKCE's challenge, state, nonce) to the provider first (RFC 9126, which
            // oidc-provider offers); the browser carries only their reference.
            Assert.Matches("[?&]client_id=tunnel2(&|$)", refused.Headers.Location!.Query);
            Assert.Matches("[?&]request_uri=urn(%3A|:)ietf(%3A|:)params(%3A|:)oauth(%3A|:)request_uri", refused.Headers.Location!.Query);
            // The state's and the nonce's other halves stay with the browser, to be matched at the callback.
            string[] set = [.. refused.Headers.GetValues("Set-Cookie")];
            Assert.Contains(set, c => c.StartsWith(".AspNetCore.Correlation.", StringComparison.Ordinal) && c.Contains("httponly", StringComparison.OrdinalIgnoreCase));
            Assert.Contains(set, c => c.StartsWith(".AspNetCore.OpenIdConnect.Nonce.", StringComparison.Ordinal) && c.Contains("httponly", StringComparison.OrdinalIgnoreCase));
        }
    }

    [Fact]
    public async Task A_guesser_trying_a_callback_every_100_ms_gets_its_three_attempts_then_429_and_another_address_keeps_its_own()
    {
        var answers = new List<HttpStatusCode>();
        using var pace = new PeriodicTimer(TimeSpan.FromMilliseconds(100)); // a guesser's own pace, not a wait for the server
        for (int i = 0; i < 20 && await pace.WaitForNextTickAsync(); i++)
        {
            using HttpResponseMessage answer = await ForgedCallbackAsync("10.66.0.7", i);
            answers.Add(answer.StatusCode);
            if (answer.StatusCode == HttpStatusCode.TooManyRequests)
            {
                Assert.True(answer.Headers.RetryAfter?.Delta > TimeSpan.Zero, "a 429 says when to come back");
            }
        }

        using HttpResponseMessage other = await ForgedCallbackAsync("10.66.0.8", 0);

        Assert.Equal([.. Enumerable.Repeat(HttpStatusCode.Unauthorized, 3), .. Enumerable.Repeat(HttpStatusCode.TooManyRequests, 17)], answers);
        Assert.Equal(HttpStatusCode.Unauthorized, other.StatusCode); // another address keeps its own attempts
        await Eventually.WaitUntilAsync(() => Stack.Server.Output.Contains(
            $"Session {Session}: visitor 10.66.0.7 refused at the login's callback (login-failed)", StringComparison.Ordinal), "the server logs the failed callbacks");
    }

    [Fact]
    public async Task A_flood_of_200_forged_callbacks_at_once_from_one_address_gets_exactly_its_three_attempts()
    {
        HttpResponseMessage[] answers = await Task.WhenAll(Enumerable.Range(0, 200).Select(i => ForgedCallbackAsync("10.66.0.9", i)));

        int[] counts = [answers.Count(a => a.StatusCode == HttpStatusCode.Unauthorized), answers.Count(a => a.StatusCode == HttpStatusCode.TooManyRequests)];
        foreach (HttpResponseMessage answer in answers)
        {
            answer.Dispose();
        }

        Assert.Equal([3, 197], counts); // counted before the handler runs: concurrent guesses cannot outrun the count
    }

    private Task<HttpResponseMessage> ForgedCallbackAsync(string visitor, int guess)
    {
        var forged = new HttpRequestMessage(HttpMethod.Get, Stack.SessionUrl($"{OidcRule.CallbackPath}?code=guess-{guess}&state=forged-{Guid.NewGuid():N}"));
        forged.Headers.Add("X-Forwarded-For", visitor);
        return _http.SendAsync(forged);
    }

    private Task<IResponse?> LogInAsync(IPage page, string url, string email) => _provider!.LogInAsync(page, url, email, Stack.PublicUrl);

    private Task<HttpResponseMessage> SendAsync(string cookie, string visitor, bool forgeIdentity = false)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, Stack.SessionUrl("/loadtest/get"));
        if (forgeIdentity)
        {
            request.Headers.Add("X-Forwarded-User", "mallory");
            request.Headers.Add("X-Forwarded-Email", "mallory@example.com");
        }

        if (cookie.Length > 0)
        {
            request.Headers.Add("Cookie", cookie);
        }

        request.Headers.Add("X-Forwarded-For", visitor);
        return _http.SendAsync(request);
    }

    private static async Task AssertProblemAsync(HttpResponseMessage response, HttpStatusCode status, string type, string detail)
    {
        Assert.Equal(status, response.StatusCode);
        using JsonDocument problem = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal(type, problem.RootElement.GetProperty("type").GetString());
        Assert.StartsWith(detail, problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }
}
