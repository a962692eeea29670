using System.Buffers;
using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Backends;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>
/// Which <c>Host</c> the backend gets (<c>--host-header</c>) and what path mode does with the session's prefix
/// (<c>--path-prefix</c>), in path mode and host mode, with real parts: the caller's Host by default, the backend's own
/// or a fixed one on request, health probes and inspector replays sending what the relay sends.
/// </summary>
public sealed class HostHeaderTests : IAsyncLifetime
{
    private const string Suffix = "hosts.test";
    private const string VirtualHost = "app.internal";

    private readonly HttpClient _http = CallerHttp.Create();
    private TunnelStack? _stack;
    private RecordingBackend? _backend;

    private TunnelStack Stack => _stack!;

    private RecordingBackend Backend => _backend!;

    public async ValueTask InitializeAsync()
    {
        _stack = await TunnelStack.StartAsync("--host-suffix", Suffix);
        _backend = await RecordingBackend.StartAsync();
    }

    public async ValueTask DisposeAsync()
    {
        _http.Dispose();
        if (_backend is not null)
        {
            await _backend.DisposeAsync();
        }

        if (_stack is not null)
        {
            await _stack.DisposeAsync();
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task By_default_the_backend_gets_the_callers_Host_beside_the_forwarded_headers(bool byHost)
    {
        string session = NewSession("preserve");
        await Stack.StartClientAsync(session, Backend.Url);

        RecordingBackend.ReceivedRequest seen = await SendAsync(session, byHost, "/items?q=1");

        string callerHost = CallerHost(session, byHost);
        Assert.Equal("/items?q=1", seen.Target);
        Assert.Equal(callerHost, seen.Headers["Host"]);
        Assert.Equal(callerHost, seen.Headers["X-Forwarded-Host"]);
        Assert.Equal("http", seen.Headers["X-Forwarded-Proto"]);
        Assert.Equal("127.0.0.1", seen.Headers["X-Forwarded-For"]);
        Assert.Equal(byHost ? null : $"/session/{session}", seen.Headers.GetValueOrDefault("X-Forwarded-Prefix"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Host_header_rewrite_sends_the_backends_own_host_and_port(bool byHost)
    {
        string session = NewSession("rewrite");
        await Stack.StartClientAsync(session, Backend.Url, extraArgs: ["--host-header", "rewrite"]);

        RecordingBackend.ReceivedRequest seen = await SendAsync(session, byHost, "/items");

        Assert.Equal(Backend.Url.Authority, seen.Headers["Host"]);
        Assert.Equal(CallerHost(session, byHost), seen.Headers["X-Forwarded-Host"]);
    }

    [Fact]
    public async Task A_fixed_Host_reaches_a_named_virtual_host_whose_health_probe_and_replays_send_it_too()
    {
        var hosts = new List<string>();
        await using LoopbackApp virtualHost = await LoopbackApp.StartAsync(web => web.Run(async context =>
        {
            string host = context.Request.Host.Value ?? "";
            lock (hosts)
            {
                hosts.Add(host);
            }

            // As a server with named virtual hosts answers a name it does not serve.
            context.Response.StatusCode = host == VirtualHost ? StatusCodes.Status200OK : StatusCodes.Status421MisdirectedRequest;
            await context.Response.WriteAsync(host);
        }));
        string session = NewSession("vhost");
        TunnelClientHandle client = await Stack.StartInspectedClientAsync(session, virtualHost.Url,
            extraArgs: ["--host-header", VirtualHost, "--health-path", "/healthz", "--health-interval", "00:00:00.200"]);

        Assert.True(client.Host.Services.GetRequiredService<BackendSet>().All[0].IsProbedReady, "the probe, sent with the fixed Host, passes");
        using HttpResponseMessage response = await _http.GetAsync(Stack.SessionUrl(session, "/page"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(VirtualHost, await response.Content.ReadAsStringAsync());

        using HttpClient api = CallerHttp.Create();
        long id = await NewestKeptIdAsync(api, client.InspectorUrl);
        using HttpResponseMessage replay = await api.PostAsync(new Uri(client.InspectorUrl, $"/api/requests/{id}/replay"), null);
        using JsonDocument replayed = JsonDocument.Parse(await replay.Content.ReadAsStringAsync());
        Assert.Equal(200, replayed.RootElement.GetProperty("response").GetProperty("status").GetInt32());
        lock (hosts)
        {
            Assert.All(hosts, host => Assert.Equal(VirtualHost, host));
        }

        // The same backend with its own address as Host: its probe fails, so the server sends nothing there.
        string rewritten = NewSession("vhost-rewrite");
        TunnelClientHandle wrong = await Stack.StartClientAsync(rewritten, virtualHost.Url,
            extraArgs: ["--host-header", "rewrite", "--health-path", "/healthz"]);
        Assert.False(wrong.Host.Services.GetRequiredService<BackendSet>().All[0].IsProbedReady);
        using HttpResponseMessage refused = await _http.GetAsync(Stack.SessionUrl(rewritten, "/page"));
        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
    }

    [Theory]
    [InlineData("preserve")]
    [InlineData("rewrite")]
    public async Task An_inspector_replay_sends_the_Host_the_relay_sent(string mode)
    {
        string session = NewSession("replay");
        TunnelClientHandle client = await Stack.StartInspectedClientAsync(session, Backend.Url, extraArgs: ["--host-header", mode]);
        RecordingBackend.ReceivedRequest relayed = await SendAsync(session, byHost: true, "/replayed");
        Assert.Equal(mode == "preserve" ? CallerHost(session, byHost: true) : Backend.Url.Authority, relayed.Headers["Host"]);

        using HttpClient api = CallerHttp.Create();
        long id = await NewestKeptIdAsync(api, client.InspectorUrl);
        using HttpResponseMessage replay = await api.PostAsync(new Uri(client.InspectorUrl, $"/api/requests/{id}/replay"), null);

        Assert.Equal(HttpStatusCode.OK, replay.StatusCode);
        RecordingBackend.ReceivedRequest again = Backend.Received.Last();
        Assert.Equal(("/replayed", relayed.Headers["Host"]), (again.Target, again.Headers["Host"]));

        // The inspector shows the Host each was sent, first among the request's headers.
        foreach (JsonElement kept in await KeptAsync(api, client.InspectorUrl))
        {
            JsonElement first = kept.GetProperty("request").GetProperty("headers")[0];
            Assert.Equal(("Host", relayed.Headers["Host"]), (first.GetProperty("name").GetString(), first.GetProperty("value").GetString()));
        }
    }

    [Fact]
    public async Task Path_prefix_keep_sends_the_path_as_the_caller_did_and_rewrites_nothing()
    {
        string session = NewSession("keep");
        TunnelClientHandle client = await Stack.StartInspectedClientAsync(session, Backend.Url, extraArgs: ["--path-prefix", "keep"]);

        using HttpResponseMessage response = await _http.GetAsync(Stack.SessionUrl(session, "/items?q=1"));
        RecordingBackend.ReceivedRequest seen = Backend.Received.Last();
        Assert.Equal($"/session/{session}/items?q=1", seen.Target);
        Assert.False(seen.Headers.ContainsKey("X-Forwarded-Prefix"), "nothing was removed, so nothing is announced");
        Assert.Equal(Stack.PublicUrl.Authority, seen.Headers["Host"]);
        Assert.Equal(["sid=backend-secret; Path=/"], response.Headers.GetValues("Set-Cookie"));

        // The session's root without its slash is still redirected by the server; with it, the backend gets it as is.
        using HttpResponseMessage bare = await _http.GetAsync(new Uri(Stack.PublicUrl, $"/session/{session}?a=1"));
        Assert.Equal(HttpStatusCode.MovedPermanently, bare.StatusCode);
        Assert.Equal($"/session/{session}/?a=1", bare.Headers.Location?.OriginalString);
        using HttpResponseMessage root = await _http.GetAsync(new Uri(Stack.PublicUrl, $"/session/{session}/?a=1"));
        Assert.Equal($"/session/{session}/?a=1", Backend.Received.Last().Target);

        // Host mode removes no prefix: the path stays the caller's there too.
        Assert.Equal("/items", (await SendAsync(session, byHost: true, "/items")).Target);

        // The inspector keeps what the backend was sent, and a replay sends that.
        using HttpClient api = CallerHttp.Create();
        await Eventually.WaitUntilAsync(async () => (await KeptAsync(api, client.InspectorUrl)).Length == 3, "three requests are kept");
        JsonElement kept = (await KeptAsync(api, client.InspectorUrl))[^1];
        Assert.Equal($"/session/{session}/items?q=1", kept.GetProperty("request").GetProperty("target").GetString());
        using HttpResponseMessage replay = await api.PostAsync(new Uri(client.InspectorUrl, $"/api/requests/{kept.GetProperty("id").GetInt64()}/replay"), null);
        Assert.Equal(HttpStatusCode.OK, replay.StatusCode);
        Assert.Equal($"/session/{session}/items?q=1", Backend.Received.Last().Target);
    }

    [Fact]
    public async Task Path_prefix_strip_stays_the_default_with_cookie_paths_moved_under_the_prefix()
    {
        string session = NewSession("strip");
        await Stack.StartClientAsync(session, Backend.Url);

        using HttpResponseMessage response = await _http.GetAsync(Stack.SessionUrl(session, "/items"));

        Assert.Equal("/items", Backend.Received.Last().Target);
        Assert.Equal([$"sid=backend-secret; Path=/session/{session}/"], response.Headers.GetValues("Set-Cookie"));
    }

    [Fact]
    public async Task A_client_from_before_these_options_logs_in_and_gets_the_head_it_always_got()
    {
        // A version-3 login with none of the later headers, as the oldest client this server takes sends it.
        string session = NewSession("old");
        using RawTunnelConnection old = await RawTunnelConnection.OpenAsync(Stack.TunnelUrl);
        string answer = await old.HandshakeAsync($"Authorization: Bearer {TunnelStack.Token}\r\n", session);
        Assert.StartsWith("HTTP/1.1 101", answer, StringComparison.Ordinal);
        await Eventually.WaitUntilAsync(() => Stack.Registry.GetUplinks(session).Count == 1, "the old client is registered");

        using var cancel = new CancellationTokenSource();
        Task<HttpResponseMessage> pending = _http.GetAsync(Stack.SessionUrl(session, "/items?q=1"), cancel.Token);
        RequestHead head = await ReadRequestHeadAsync(old);

        // What such a client writes its backend's request from: the prefix removed, the caller's Host only in
        // X-Forwarded-Host. It writes its backend's own Host and this target, as before.
        Assert.Equal(("GET", "/items?q=1"), (head.Method, head.Target));
        Assert.DoesNotContain(head.Headers, field => field.Name.Equals("Host", StringComparison.OrdinalIgnoreCase));
        Assert.Contains(new HeaderField("X-Forwarded-Host", Stack.PublicUrl.Authority), head.Headers);
        Assert.Contains(new HeaderField("X-Forwarded-Prefix", $"/session/{session}"), head.Headers);
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pending);
    }

    private static async Task<RequestHead> ReadRequestHeadAsync(RawTunnelConnection connection)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        byte[] header = new byte[FrameHeader.Size];
        while (true)
        {
            await connection.Stream.ReadExactlyAsync(header, timeout.Token);
            FrameHeader frame = FrameHeader.ReadFrom(header);
            byte[] payload = new byte[frame.PayloadLength];
            await connection.Stream.ReadExactlyAsync(payload, timeout.Token);
            if (frame.Type == FrameType.RequestHead)
            {
                return HeadCodec.ReadRequestHead(new ReadOnlySequence<byte>(payload));
            }
        }
    }

    private static string NewSession(string kind) => $"{kind}-{Guid.NewGuid().ToString("N")[..10]}";

    private string CallerHost(string session, bool byHost) => byHost ? $"{session}.{Suffix}:{Stack.PublicUrl.Port}" : Stack.PublicUrl.Authority;

    /// <summary>Sends a GET by path or by the session's host name and returns what the backend received for it.</summary>
    private async Task<RecordingBackend.ReceivedRequest> SendAsync(string session, bool byHost, string pathAndQuery)
    {
        int before = Backend.Received.Count;
        using var request = new HttpRequestMessage(HttpMethod.Get, byHost ? new Uri(Stack.PublicUrl, pathAndQuery) : Stack.SessionUrl(session, pathAndQuery));
        if (byHost)
        {
            request.Headers.Host = CallerHost(session, byHost);
        }

        using HttpResponseMessage response = await _http.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(before + 1, Backend.Received.Count);
        return Backend.Received.Last();
    }

    private static async Task<long> NewestKeptIdAsync(HttpClient api, Uri inspector)
    {
        JsonElement newest = await Eventually.ValueAsync(async () => (await KeptAsync(api, inspector)).FirstOrDefault(),
            exchange => exchange.ValueKind == JsonValueKind.Object, "the request is kept");
        return newest.GetProperty("id").GetInt64();
    }

    private static async Task<JsonElement[]> KeptAsync(HttpClient api, Uri inspector)
    {
        using JsonDocument list = JsonDocument.Parse(await api.GetStringAsync(new Uri(inspector, "/api/requests")));
        return [.. list.RootElement.GetProperty("requests").EnumerateArray().Select(element => element.Clone())];
    }
}
