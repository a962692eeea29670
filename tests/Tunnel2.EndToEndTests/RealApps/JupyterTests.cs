using System.Net;
using System.Net.Http.Json;
using System.Text.Json.Nodes;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.RealApps;

/// <summary>
/// Jupyter Notebook 6.4 (Debian's python3-notebook) through the tunnel, as a user runs it: in host mode
/// (<c>jup.&lt;suffix&gt;</c>), and in path mode under <c>/session/jup/</c> with its <c>homeurl</c> set to that and the
/// client keeping the prefix. Jupyter compares <c>Origin</c> and <c>Referer</c> with <c>Host</c>, so every step
/// below fails when the backend gets another Host than the caller's; in path mode each one 404s when the prefix is
/// stripped. The caller speaks to the public port by the public name, as a browser would.
/// </summary>
public sealed class JupyterTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Log_in_create_a_notebook_run_a_cell_over_the_kernels_WebSocket_and_download_a_file(bool byHost)
    {
        await using JupyterThroughTunnel jupyter = await JupyterThroughTunnel.StartAsync(byHost);
        using HttpClient browser = jupyter.Browser();
        Uri home = jupyter.PublicBase;
        string origin = home.GetLeftPart(UriPartial.Authority);

        // Log in with the token on the login form, its _xsrf field echoed from the cookie.
        using HttpResponseMessage loginPage = await browser.GetAsync(new Uri(home, "login"));
        Assert.Equal(HttpStatusCode.OK, loginPage.StatusCode);
        string xsrf = jupyter.Cookie("_xsrf");
        using var login = new HttpRequestMessage(HttpMethod.Post, new Uri(home, "login"))
        {
            Content = new FormUrlEncodedContent([new("_xsrf", xsrf), new("password", JupyterNotebook.Token)]),
        };
        login.Headers.TryAddWithoutValidation("Origin", origin);
        using HttpResponseMessage loggedIn = await browser.SendAsync(login);
        Assert.Equal(HttpStatusCode.Found, loggedIn.StatusCode);
        using HttpResponseMessage tree = await browser.GetAsync(new Uri(home, "tree"));
        Assert.Equal(HttpStatusCode.OK, tree.StatusCode);

        // A new notebook through the API, as the tree page's "New" button asks for one.
        using HttpResponseMessage created = await browser.SendAsync(jupyter.ApiRequest(HttpMethod.Post, "api/contents", xsrf, new { type = "notebook" }));
        Assert.True(created.StatusCode == HttpStatusCode.Created, $"{created.StatusCode}: {await created.Content.ReadAsStringAsync()}\n{jupyter.Log}");
        string notebook = (await created.Content.ReadFromJsonAsync<JsonObject>())!["path"]!.GetValue<string>();
        Assert.EndsWith(".ipynb", notebook, StringComparison.Ordinal);

        // A kernel, and a cell run over its channels WebSocket opened with the page's Origin.
        using HttpResponseMessage kernel = await browser.SendAsync(jupyter.ApiRequest(HttpMethod.Post, "api/kernels", xsrf, new { name = "python3" }));
        Assert.True(kernel.StatusCode == HttpStatusCode.Created, $"{kernel.StatusCode}: {await kernel.Content.ReadAsStringAsync()}\n{jupyter.Log}");
        string kernelId = (await kernel.Content.ReadFromJsonAsync<JsonObject>())!["id"]!.GetValue<string>();
        Assert.Equal("42\n", await jupyter.ExecuteAsync(kernelId, "print(6*7)"));

        // A file downloaded from the tree page's link: Jupyter checks its Referer against Host.
        await File.WriteAllTextAsync(Path.Combine(jupyter.Notebook.Directory, "hello.txt"), "hello through the tunnel");
        using var download = new HttpRequestMessage(HttpMethod.Get, new Uri(home, "files/hello.txt?download=1"));
        download.Headers.Referrer = new Uri(home, "tree");
        using HttpResponseMessage file = await browser.SendAsync(download);
        Assert.True(file.StatusCode == HttpStatusCode.OK, $"{file.StatusCode}\n{jupyter.Log}");
        Assert.Equal("attachment", file.Content.Headers.ContentDisposition?.DispositionType);
        Assert.Equal("hello through the tunnel", await file.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task With_host_header_rewrite_Jupyter_sees_a_cross_origin_request_and_refuses_it()
    {
        await using JupyterThroughTunnel jupyter = await JupyterThroughTunnel.StartAsync(byHost: true, "--host-header", "rewrite");
        using HttpClient browser = jupyter.Browser();
        (await browser.GetAsync(new Uri(jupyter.PublicBase, "login"))).Dispose();
        (await browser.GetAsync(new Uri(jupyter.PublicBase, "?token=" + JupyterNotebook.Token))).Dispose();

        using HttpResponseMessage kernel = await browser.SendAsync(jupyter.ApiRequest(HttpMethod.Post, "api/kernels", jupyter.Cookie("_xsrf"), new { name = "python3" }));

        // What the issue saw with the tunnel's old default, and why preserve is the default now (Jupyter answers an API
        // request it takes for cross-origin with 404).
        // Its log line comes over a pipe read apart from the response, so it may land just after the 404.
        Assert.Equal(HttpStatusCode.NotFound, kernel.StatusCode);
        await Eventually.TryWaitAsync(
            () => jupyter.Notebook.Output.Contains("Blocking Cross Origin API request", StringComparison.Ordinal), Eventually.DefaultTimeout);
        Assert.Contains("Blocking Cross Origin API request", jupyter.Notebook.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task In_path_mode_the_session_root_without_its_slash_leads_to_the_notebooks_tree()
    {
        await using JupyterThroughTunnel jupyter = await JupyterThroughTunnel.StartAsync(byHost: false);
        using HttpClient browser = jupyter.Browser();

        using HttpResponseMessage bare = await browser.GetAsync(new Uri(jupyter.PublicBase, "/session/jup?token=" + JupyterNotebook.Token));
        Assert.Equal(HttpStatusCode.MovedPermanently, bare.StatusCode);
        Assert.Equal("/session/jup/?token=" + JupyterNotebook.Token, bare.Headers.Location?.OriginalString);

        // Jupyter itself redirects its base to its tree, under the base path it knows: nothing is rewritten on the way.
        using HttpResponseMessage root = await browser.GetAsync(new Uri(jupyter.PublicBase, bare.Headers.Location!));
        Assert.Equal(HttpStatusCode.Found, root.StatusCode);
        Assert.StartsWith("/session/jup/tree", root.Headers.Location?.OriginalString, StringComparison.Ordinal);
        using HttpResponseMessage tree = await browser.GetAsync(new Uri(jupyter.PublicBase, root.Headers.Location!));
        Assert.Equal(HttpStatusCode.OK, tree.StatusCode);
    }
}
