using System.Net;
using System.Net.Http.Json;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests;

/// <summary>
/// Jupyter Notebook 6.4 (Debian's python3-notebook) through the tunnel, as a user runs it: in host mode
/// (<c>jup.&lt;suffix&gt;</c>), and in path mode under <c>/session/jup/</c> with its <c>homeurl</c> set to that and the
/// client keeping the prefix. Jupyter compares <c>Origin</c> and <c>Referer</c> with <c>Host</c>, so every step
/// below fails when the backend gets another Host than the caller's; in path mode each one 404s when the prefix is
/// stripped. The caller speaks to the public port by the public name, as a browser would.
/// </summary>
public sealed class JupyterTests
{
    public const string Suffix = "apps.test";

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
        Assert.Equal(HttpStatusCode.NotFound, kernel.StatusCode);
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

/// <summary>A tunnel stack with host routing under <see cref="JupyterTests.Suffix"/>, a Jupyter behind a client of session <c>jup</c>.</summary>
internal sealed class JupyterThroughTunnel : IAsyncDisposable
{
    public const string Session = "jup";

    private readonly CookieContainer _cookies = new();

    private JupyterThroughTunnel(TunnelStack stack, JupyterNotebook notebook, Uri publicBase)
    {
        Stack = stack;
        Notebook = notebook;
        PublicBase = publicBase;
    }

    public TunnelStack Stack { get; }

    public JupyterNotebook Notebook { get; }

    /// <summary>Where a browser finds the notebook: <c>http://jup.apps.test:port/</c> or <c>http://127.0.0.1:port/session/jup/</c>.</summary>
    public Uri PublicBase { get; }

    public string Log => "Jupyter's log:\n" + Notebook.Output;

    /// <param name="byHost">Host mode; else path mode, Jupyter's homeurl the session's prefix and the client keeping it.</param>
    /// <param name="clientArgs">More options for the client.</param>
    public static async Task<JupyterThroughTunnel> StartAsync(bool byHost, params string[] clientArgs)
    {
        TunnelStack stack = await TunnelStack.StartAsync("--host-suffix", JupyterTests.Suffix);
        JupyterNotebook? notebook = null;
        try
        {
            notebook = await JupyterNotebook.StartAsync(byHost ? "/" : $"/session/{Session}/");
            string[] prefix = byHost ? [] : ["--path-prefix", "keep"];
            await stack.StartClientAsync(Session, notebook.Url, extraArgs: [.. prefix, .. clientArgs]);
            var publicBase = new Uri(byHost
                ? $"http://{Session}.{JupyterTests.Suffix}:{stack.PublicUrl.Port}/"
                : $"http://127.0.0.1:{stack.PublicUrl.Port}/session/{Session}/");
            return new JupyterThroughTunnel(stack, notebook, publicBase);
        }
        catch
        {
            if (notebook is not null)
            {
                await notebook.DisposeAsync();
            }

            await stack.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// A browser-like client: keeps cookies, follows no redirects, and reaches any host name at the public port
    /// (the test's stand-in for DNS pointing <c>*.apps.test</c> at the server).
    /// </summary>
    public HttpClient Browser() => new(Handler()) { Timeout = TimeSpan.FromSeconds(60) };

    public string Cookie(string name)
    {
        return _cookies.GetCookies(PublicBase)[name]?.Value ?? throw new InvalidOperationException($"No {name} cookie for {PublicBase}.");
    }

    /// <summary>A JSON API call as the notebook's pages make it: the _xsrf cookie echoed in X-XSRFToken, the page's Origin and Referer.</summary>
    public HttpRequestMessage ApiRequest(HttpMethod method, string path, string xsrf, object body)
    {
        var request = new HttpRequestMessage(method, new Uri(PublicBase, path)) { Content = JsonContent.Create(body) };
        request.Headers.TryAddWithoutValidation("X-XSRFToken", xsrf);
        request.Headers.TryAddWithoutValidation("Origin", PublicBase.GetLeftPart(UriPartial.Authority));
        request.Headers.Referrer = new Uri(PublicBase, "tree");
        return request;
    }

    /// <summary>Runs <paramref name="code"/> on the kernel over its channels WebSocket and returns what it printed.</summary>
    public async Task<string> ExecuteAsync(string kernelId, string code)
    {
        using var socket = new ClientWebSocket();
        socket.Options.SetRequestHeader("Origin", PublicBase.GetLeftPart(UriPartial.Authority));
        var url = new UriBuilder(new Uri(PublicBase, $"api/kernels/{kernelId}/channels?session_id={Guid.NewGuid():N}")) { Scheme = "ws" }.Uri;
        using var invoker = new HttpMessageInvoker(Handler());
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        try
        {
            await socket.ConnectAsync(url, invoker, timeout.Token);
        }
        catch (WebSocketException ex)
        {
            throw new InvalidOperationException($"The kernel's WebSocket was refused: {ex.Message}\n{Log}", ex);
        }

        string messageId = Guid.NewGuid().ToString("N");
        await socket.SendAsync(Encoding.UTF8.GetBytes(ExecuteRequest(messageId, code)), WebSocketMessageType.Text, endOfMessage: true, timeout.Token);
        // Output comes on iopub and ends with its "idle" status; the reply comes on shell, in either order.
        var printed = new StringBuilder();
        bool replied = false, idle = false;
        while (!(replied && idle))
        {
            JsonObject message = await ReceiveAsync(socket, timeout.Token);
            if (message["parent_header"]?["msg_id"]?.GetValue<string>() != messageId)
            {
                continue;
            }

            string? type = message["msg_type"]?.GetValue<string>() ?? message["header"]?["msg_type"]?.GetValue<string>();
            if (type == "stream")
            {
                printed.Append(message["content"]!["text"]!.GetValue<string>());
            }
            else if (type == "execute_reply")
            {
                Assert.Equal("ok", message["content"]!["status"]!.GetValue<string>());
                replied = true;
            }
            else if (type == "status")
            {
                idle |= message["content"]!["execution_state"]!.GetValue<string>() == "idle";
            }
        }

        return printed.ToString();
    }

    public async ValueTask DisposeAsync()
    {
        await Notebook.DisposeAsync();
        await Stack.DisposeAsync();
    }

    private SocketsHttpHandler Handler() => new()
    {
        CookieContainer = _cookies,
        UseCookies = true,
        AllowAutoRedirect = false,
        ConnectCallback = async (_, cancellationToken) =>
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await socket.ConnectAsync(IPAddress.Loopback, Stack.PublicUrl.Port, cancellationToken);
            return new NetworkStream(socket, ownsSocket: true);
        },
    };

    private static string ExecuteRequest(string messageId, string code) => new JsonObject
    {
        ["header"] = new JsonObject
        {
            ["msg_id"] = messageId, ["username"] = "e2e", ["session"] = Guid.NewGuid().ToString("N"),
            ["msg_type"] = "execute_request", ["version"] = "5.3", ["date"] = DateTimeOffset.UtcNow.ToString("O"),
        },
        ["parent_header"] = new JsonObject(),
        ["metadata"] = new JsonObject(),
        ["content"] = new JsonObject
        {
            ["code"] = code, ["silent"] = false, ["store_history"] = false, ["user_expressions"] = new JsonObject(),
            ["allow_stdin"] = false, ["stop_on_error"] = true,
        },
        ["channel"] = "shell",
        ["buffers"] = new JsonArray(),
    }.ToJsonString();

    private static async Task<JsonObject> ReceiveAsync(ClientWebSocket socket, CancellationToken cancellationToken)
    {
        using var message = new MemoryStream();
        byte[] buffer = new byte[16 * 1024];
        WebSocketReceiveResult result;
        do
        {
            result = await socket.ReceiveAsync(buffer, cancellationToken);
            if (result.MessageType == WebSocketMessageType.Close)
            {
                throw new InvalidOperationException($"The kernel's WebSocket closed: {result.CloseStatus} {result.CloseStatusDescription}");
            }

            message.Write(buffer, 0, result.Count);
        }
        while (!result.EndOfMessage);

        return JsonNode.Parse(message.ToArray())!.AsObject();
    }
}
