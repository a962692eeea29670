using System.Net;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.RealApps;

/// <summary>
/// Django 3.2's admin (Debian's python3-django) through the tunnel, as a browser uses it: in host mode
/// (<c>dj.apps.test</c>, the public name in <c>ALLOWED_HOSTS</c>), and in path mode under <c>/session/dj/</c>, the
/// site's URLs and <c>STATIC_URL</c> under that path and the client keeping the prefix. Each step follows the links and redirects
/// the app itself built, so a wrong base path or Host shows as a 404, a 400 or a redirect out of the session.
/// </summary>
public sealed partial class DjangoAdminTests
{
    private const string Session = "dj";
    private const string Suffix = "apps.test";

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Log_in_to_the_admin_add_a_user_see_it_listed_fetch_a_static_file_and_log_out(bool byHost)
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--host-suffix", Suffix);
        // ALLOWED_HOSTS has the name the caller uses and no other: Django answers 400 to any other Host.
        await using PythonApp django = await DjangoSite.StartAsync(byHost ? $"{Session}.{Suffix}" : "127.0.0.1", byHost ? "/" : $"/session/{Session}/");
        await stack.StartClientAsync(Session, django.Url, extraArgs: byHost ? [] : ["--path-prefix", "keep"]);
        var home = new Uri(byHost ? $"http://{Session}.{Suffix}:{stack.PublicUrl.Port}/" : $"http://127.0.0.1:{stack.PublicUrl.Port}/session/{Session}/");
        var browser = new PublicBrowser(stack.PublicUrl.Port);
        using HttpClient http = browser.Client();
        string log = "\nDjango's log:\n";

        // The admin sends an anonymous caller to its login page, under its own base.
        using HttpResponseMessage anonymous = await http.GetAsync(new Uri(home, "admin/"));
        Assert.True(anonymous.StatusCode == HttpStatusCode.Found, $"{anonymous.StatusCode}{log}{django.Output}");
        Uri loginUrl = new(home, anonymous.Headers.Location!);
        Assert.StartsWith(new Uri(home, "admin/login/").ToString(), loginUrl.ToString(), StringComparison.Ordinal);
        string loginPage = await PageAsync(http, loginUrl, django);

        // Log in with the form's CSRF token and the csrftoken cookie, posted where the form says, as a browser would.
        using HttpResponseMessage loggedIn = await PostFormAsync(http, new Uri(loginUrl, FormAction(loginPage)), loginUrl, [
            new("csrfmiddlewaretoken", CsrfToken(loginPage)), new("username", DjangoSite.User), new("password", DjangoSite.Password),
            new("next", new Uri(home, "admin/").AbsolutePath),
        ]);
        Assert.True(loggedIn.StatusCode == HttpStatusCode.Found, $"{loggedIn.StatusCode}: {await loggedIn.Content.ReadAsStringAsync()}{log}{django.Output}");
        Assert.Equal(new Uri(home, "admin/").AbsolutePath, loggedIn.Headers.Location?.OriginalString);
        Assert.Contains("Site administration", await PageAsync(http, new Uri(home, "admin/"), django), StringComparison.Ordinal);

        // Add a user: refused without the CSRF token, saved with it, then in the list.
        var addUrl = new Uri(home, "admin/auth/user/add/");
        string addPage = await PageAsync(http, addUrl, django);
        string username = byHost ? "visitor-by-host" : "visitor-by-path";
        KeyValuePair<string, string>[] newUser = [new("username", username), new("password1", "e2e-Visitor-pass-0123"), new("password2", "e2e-Visitor-pass-0123"), new("_save", "Save")];
        using (HttpResponseMessage forged = await PostFormAsync(http, addUrl, addUrl, newUser))
        {
            Assert.Equal(HttpStatusCode.Forbidden, forged.StatusCode);
        }

        using HttpResponseMessage added = await PostFormAsync(http, addUrl, addUrl, [new("csrfmiddlewaretoken", CsrfToken(addPage)), .. newUser]);
        Assert.True(added.StatusCode == HttpStatusCode.Found, $"{added.StatusCode}: {await added.Content.ReadAsStringAsync()}{log}{django.Output}");
        Assert.StartsWith(new Uri(home, "admin/auth/user/").AbsolutePath, added.Headers.Location?.OriginalString, StringComparison.Ordinal);
        string users = await PageAsync(http, new Uri(home, "admin/auth/user/"), django);
        Assert.Contains($">{username}</a>", users, StringComparison.Ordinal);

        // The admin's stylesheet, from the link its page carries (served by runserver under the site's base).
        var stylesheet = new Uri(home, StylesheetLink().Match(users).Groups[1].Value);
        Assert.StartsWith(home.AbsolutePath, stylesheet.AbsolutePath, StringComparison.Ordinal);
        using HttpResponseMessage css = await http.GetAsync(stylesheet);
        Assert.True(css.StatusCode == HttpStatusCode.OK, $"{stylesheet}: {css.StatusCode}{log}{django.Output}");
        Assert.Equal("text/css", css.Content.Headers.ContentType?.MediaType);
        Assert.Contains("body", await css.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        // Log out (a GET in Django 3.2); the admin then sends the caller back to its login page.
        Assert.Contains("Logged out", await PageAsync(http, new Uri(home, "admin/logout/"), django), StringComparison.Ordinal);
        using HttpResponseMessage afterLogout = await http.GetAsync(new Uri(home, "admin/"));
        Assert.Equal(HttpStatusCode.Found, afterLogout.StatusCode);
        Assert.StartsWith(new Uri(home, "admin/login/").AbsolutePath, afterLogout.Headers.Location?.OriginalString, StringComparison.Ordinal);
    }

    [Fact]
    public async Task With_host_header_rewrite_Django_refuses_the_backends_address_it_was_not_told_to_serve()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--host-suffix", Suffix);
        await using PythonApp django = await DjangoSite.StartAsync($"{Session}.{Suffix}", "/");
        await stack.StartClientAsync(Session, django.Url, extraArgs: ["--host-header", "rewrite"]);
        using HttpClient http = new PublicBrowser(stack.PublicUrl.Port).Client();

        using HttpResponseMessage login = await http.GetAsync(new Uri($"http://{Session}.{Suffix}:{stack.PublicUrl.Port}/admin/login/"));

        // What the tunnel's old default did to such a site, and why the caller's Host reaches the backend by default now.
        Assert.Equal(HttpStatusCode.BadRequest, login.StatusCode);
        await Eventually.WaitUntilAsync(() => django.Output.Contains("Invalid HTTP_HOST header: '127.0.0.1:", StringComparison.Ordinal),
            "Django logs the Host it refused");
    }

    private static async Task<string> PageAsync(HttpClient http, Uri url, PythonApp django)
    {
        using HttpResponseMessage page = await http.GetAsync(url);
        string body = await page.Content.ReadAsStringAsync();
        Assert.True(page.StatusCode == HttpStatusCode.OK, $"{url}: {page.StatusCode}: {body}\nDjango's log:\n{django.Output}");
        return body;
    }

    private static async Task<HttpResponseMessage> PostFormAsync(HttpClient http, Uri url, Uri referer, KeyValuePair<string, string>[] fields)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, url) { Content = new FormUrlEncodedContent(fields) };
        request.Headers.Referrer = referer;
        request.Headers.TryAddWithoutValidation("Origin", referer.GetLeftPart(UriPartial.Authority));
        return await http.SendAsync(request);
    }

    private static string CsrfToken(string page)
    {
        Match token = CsrfField().Match(page);
        Assert.True(token.Success, "The page has no csrfmiddlewaretoken field.");
        return token.Groups[1].Value;
    }

    private static string FormAction(string page)
    {
        Match action = LoginFormAction().Match(page);
        Assert.True(action.Success, "The login page has no login form.");
        return WebUtility.HtmlDecode(action.Groups[1].Value);
    }

    [GeneratedRegex("""name="csrfmiddlewaretoken" value="([^"]+)""")]
    private static partial Regex CsrfField();

    [GeneratedRegex("""<form action="([^"]*)" method="post" id="login-form">""")]
    private static partial Regex LoginFormAction();

    [GeneratedRegex("""href="([^"]*admin/css/base\.css)""")]
    private static partial Regex StylesheetLink();
}
