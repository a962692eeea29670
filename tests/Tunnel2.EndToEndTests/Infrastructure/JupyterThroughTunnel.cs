using System.Net;
using System.Net.Http.Json;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json.Nodes;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>A tunnel stack with host routing under <c>apps.test</c>, a Jupyter behind a client of session <c>jup</c>.</summary>
public sealed class JupyterThroughTunnel : IAsyncDisposable
{
    public const string Session = "jup";

    /// <summary>The server's host suffix: <c>jup.apps.test</c> reaches the session by name.</summary>
    public const string Suffix = "apps.test";

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
        TunnelStack stack = await TunnelStack.StartAsync("--host-suffix", Suffix);
        JupyterNotebook? notebook = null;
        try
        {
            notebook = await JupyterNotebook.StartAsync(byHost ? "/" : $"/session/{Session}/");
            string[] prefix = byHost ? [] : ["--path-prefix", "keep"];
            await stack.StartClientAsync(Session, notebook.Url, extraArgs: [.. prefix, .. clientArgs]);
            var publicBase = new Uri(byHost
                ? $"http://{Session}.{Suffix}:{stack.PublicUrl.Port}/"
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
            ["msg_id"] = messageId,
            ["username"] = "e2e",
            ["session"] = Guid.NewGuid().ToString("N"),
            ["msg_type"] = "execute_request",
            ["version"] = "5.3",
            ["date"] = DateTimeOffset.UtcNow.ToString("O"),
        },
        ["parent_header"] = new JsonObject(),
        ["metadata"] = new JsonObject(),
        ["content"] = new JsonObject
        {
            ["code"] = code,
            ["silent"] = false,
            ["store_history"] = false,
            ["user_expressions"] = new JsonObject(),
            ["allow_stdin"] = false,
            ["stop_on_error"] = true,
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
