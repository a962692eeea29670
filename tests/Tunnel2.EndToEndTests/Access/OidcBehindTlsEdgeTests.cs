using System.Net;
using Microsoft.Playwright;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>
/// The login behind an edge that terminates TLS (Caddy, HAProxy): TunnelServer serves plain HTTP and trusts the edge's
/// address only (<c>--trusted-proxy 127.0.0.250/32</c>). The edge's <c>X-Forwarded-Proto: https</c> makes the login's
/// redirect URI https and its cookies Secure; the same header from any other address changes nothing.
/// </summary>
public sealed class OidcBehindTlsEdgeTests : IAsyncLifetime
{
    private static readonly IPAddress EdgeAddress = IPAddress.Parse("127.0.0.250");

    private OidcProvider? _provider;
    private LoginStack? _login;

    public async ValueTask InitializeAsync()
    {
        _provider = await OidcProvider.StartAsync();
        _login = await LoginStack.StartAsync(_provider.Issuer, ["--trusted-proxy", EdgeAddress + "/32"]);
    }

    public async ValueTask DisposeAsync()
    {
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
    public async Task Behind_a_trusted_TLS_edge_a_browser_is_sent_back_over_https_and_gets_a_Secure_cookie()
    {
        using var certificates = new TestCertificates();
        await using TlsEdge edge = await TlsEdge.StartAsync(_login!.Stack.PublicUrl, EdgeAddress, certificates.IssueServer());
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
        using IPlaywright _ = playwright;
        await using IBrowser __ = browser;
        IBrowserContext context = await browser.NewContextAsync(new BrowserNewContextOptions { IgnoreHTTPSErrors = true });
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
        Uri app = new(edge.Url, $"/session/{_login.Session}/loadtest/get?edge=1");

        IResponse? answer = await _provider!.LogInAsync(page, app.ToString(), "grace@example.com", edge.Url);

        Assert.Equal(200, answer!.Status);
        string callback = Assert.Single(callbacks); // the redirect URI the server gave the provider: the edge's https
        Assert.StartsWith(new Uri(edge.Url, $"/session/{_login.Session}{OidcRule.CallbackPath}?").ToString(), callback, StringComparison.Ordinal);
        BrowserContextCookiesResult cookie = Assert.Single(await context.CookiesAsync(), c => c.Name == OidcRule.CookieName);
        Assert.True(cookie.Secure, "the login cookie is Secure behind the TLS edge");
        Assert.True(cookie.HttpOnly);
        Dictionary<string, string> headers = BackendSaw.Headers(await page.InnerTextAsync("body"));
        Assert.Equal("grace@example.com", headers["X-Forwarded-Email"]);
        Assert.Equal("https", headers["X-Forwarded-Proto"]);
    }

    [Fact]
    public async Task X_Forwarded_Proto_is_believed_from_the_trusted_edge_only()
    {
        using HttpClient fromEdge = CallerHttp.From(EdgeAddress), fromElsewhere = CallerHttp.Create();
        string cookie = _login!.Cookie("heidi@example.com", TimeSpan.FromMinutes(30));

        (bool secure, string? proto) edge = await AskAsync(fromEdge, cookie);
        (bool secure, string? proto) elsewhere = await AskAsync(fromElsewhere, cookie);

        Assert.Equal((true, "https"), edge);
        Assert.Equal((false, "http"), elsewhere);
    }

    [Fact]
    public async Task Behind_the_trusted_edge_the_backend_sees_one_forwarded_set_and_none_of_the_middlewares_X_Original_headers()
    {
        using HttpClient fromEdge = CallerHttp.From(EdgeAddress);
        using var visit = new HttpRequestMessage(HttpMethod.Get, _login!.Stack.SessionUrl("/loadtest/get"));
        visit.Headers.Add("X-Forwarded-For", "203.0.113.7");
        visit.Headers.Add("X-Forwarded-Proto", "https");
        visit.Headers.Add("Cookie", _login.Cookie("ivan@example.com", TimeSpan.FromMinutes(30)));

        using HttpResponseMessage answer = await fromEdge.SendAsync(visit);

        Dictionary<string, string> headers = await BackendSaw.HeadersAsync(answer);
        Assert.Equal(("203.0.113.7", "https", _login.Stack.PublicUrl.Authority),
            (headers["X-Forwarded-For"], headers["X-Forwarded-Proto"], headers["X-Forwarded-Host"]));
        // ASP.NET Core's forwarded-headers middleware keeps what it replaced in X-Original-For/-Proto: the tunnel's to read, not the backend's.
        Assert.DoesNotContain(headers.Keys, name => name.StartsWith("X-Original-", StringComparison.OrdinalIgnoreCase));
    }

    /// <summary>
    /// Sends <c>X-Forwarded-Proto: https</c> twice: without a cookie (is the login's correlation cookie Secure?) and with
    /// one (which scheme does the backend hear of?).
    /// </summary>
    private async Task<(bool Secure, string? Proto)> AskAsync(HttpClient http, string cookie)
    {
        using var challenge = new HttpRequestMessage(HttpMethod.Get, _login!.Stack.SessionUrl("/loadtest/get"));
        challenge.Headers.Add("X-Forwarded-Proto", "https");
        using HttpResponseMessage redirect = await http.SendAsync(challenge);
        Assert.Equal(HttpStatusCode.Redirect, redirect.StatusCode);
        string correlation = Assert.Single(redirect.Headers.GetValues("Set-Cookie"), c => c.StartsWith(".AspNetCore.Correlation.", StringComparison.Ordinal));

        using var visit = new HttpRequestMessage(HttpMethod.Get, _login.Stack.SessionUrl("/loadtest/get"));
        visit.Headers.Add("X-Forwarded-Proto", "https");
        visit.Headers.Add("Cookie", cookie);
        using HttpResponseMessage answer = await http.SendAsync(visit);
        return (correlation.Contains("; secure", StringComparison.OrdinalIgnoreCase), (await BackendSaw.HeadersAsync(answer))["X-Forwarded-Proto"]);
    }
}
