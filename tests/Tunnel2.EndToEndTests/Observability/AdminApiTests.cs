using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.EndToEndTests.Observability;

/// <summary>The server's admin API: sessions and clients as JSON, one client drained or disconnected, its OpenAPI document.</summary>
public sealed class AdminApiTests
{
    [Fact]
    public async Task Sessions_and_their_clients_are_listed_with_their_traffic_and_a_client_can_be_drained_and_disconnected()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0");
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        string session = "admin-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        await stack.StartClientAsync(session, extraArgs: ["--transport", "websocket"]);
        using var http = CallerHttp.Create();
        for (int i = 0; i < 10; i++)
        {
            Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"))).StatusCode);
        }

        using (JsonDocument server = JsonDocument.Parse(await http.GetStringAsync(new Uri(admin, "/api/server"))))
        {
            Assert.Equal("TunnelServer", server.RootElement.GetProperty("name").GetString());
            Assert.Equal(2, server.RootElement.GetProperty("uplinks").GetInt32());
            Assert.False(string.IsNullOrEmpty(server.RootElement.GetProperty("version").GetString()));
        }

        using (JsonDocument sessions = JsonDocument.Parse(await http.GetStringAsync(new Uri(admin, "/api/sessions"))))
        {
            JsonElement listed = Assert.Single(sessions.RootElement.EnumerateArray(), s => s.GetProperty("id").GetString() == session);
            Assert.Equal(2, listed.GetProperty("clients").GetInt32());
            Assert.Equal(2, listed.GetProperty("readyClients").GetInt32());
            Assert.Equal(10, listed.GetProperty("requests").GetInt64());
            Assert.Equal("RoundRobin", listed.GetProperty("strategy").GetString());
        }

        JsonElement[] clients = await ClientsAsync(http, admin, session);
        Assert.Equal(2, clients.Length);
        Assert.Equal(["upgrade", "websocket"], clients.Select(c => c.GetProperty("transport").GetString()).Order());
        Assert.All(clients, c => Assert.StartsWith("127.0.0.1:", c.GetProperty("remote").GetString(), StringComparison.Ordinal));
        Assert.All(clients, c => Assert.Equal(5, c.GetProperty("requests").GetInt64())); // round robin
        Assert.All(clients, c => Assert.True(c.GetProperty("ready").GetBoolean()));

        // Drain: GoAway; the client finishes, logs in again on a new uplink (a new id), and the session keeps two clients.
        long drained = clients[0].GetProperty("id").GetInt64();
        using (HttpResponseMessage drain = await http.PostAsync(new Uri(admin, $"/api/sessions/{session}/clients/{drained}/drain"), null))
        {
            Assert.Equal(HttpStatusCode.Accepted, drain.StatusCode);
            Assert.Equal("draining", (await drain.Content.ReadFromJsonAsync<JsonElement>()).GetProperty("action").GetString());
        }

        await Eventually.WaitUntilAsync(async () => await IdsAsync(http, admin, session) is { Count: 2 } ids && !ids.Contains(drained),
            "the drained client logs in again on a new uplink");

        // Disconnect: the uplink closes at once; the client reconnects after its backoff.
        long cut = (await ClientsAsync(http, admin, session))[1].GetProperty("id").GetInt64();
        using (HttpResponseMessage disconnect = await http.DeleteAsync(new Uri(admin, $"/api/sessions/{session}/clients/{cut}")))
        {
            Assert.Equal(HttpStatusCode.OK, disconnect.StatusCode);
        }

        await Eventually.WaitUntilAsync(async () => await IdsAsync(http, admin, session) is { Count: 2 } ids && !ids.Contains(cut),
            "the disconnected client reconnects");
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"))).StatusCode);

        // Unknown ones are 404 problem+json.
        using (HttpResponseMessage none = await http.PostAsync(new Uri(admin, $"/api/sessions/{session}/clients/999999/drain"), null))
        {
            Assert.Equal(HttpStatusCode.NotFound, none.StatusCode);
            Assert.Equal("application/problem+json", none.Content.Headers.ContentType?.MediaType);
        }

        using HttpResponseMessage noSession = await http.GetAsync(new Uri(admin, "/api/sessions/no-such-session"));
        Assert.Equal(HttpStatusCode.NotFound, noSession.StatusCode);
    }

    [Fact]
    public async Task An_open_dashboard_feed_ends_when_the_server_stops_instead_of_holding_its_shutdown()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0");
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        using var http = CallerHttp.Create();
        using HttpResponseMessage live = await http.GetAsync(new Uri(admin, "/api/live"), HttpCompletionOption.ResponseHeadersRead);
        await using Stream feed = await live.Content.ReadAsStreamAsync();
        Assert.True(await feed.ReadAsync(new byte[1]) > 0); // the first snapshot arrived: the feed is open

        // The shutdown timeout is 40 s (drain + 10 s); an open feed used to hold the stop for all of it.
        await stack.StopServerAsync().WaitAsync(TimeSpan.FromSeconds(15));
        using var rest = new MemoryStream();
        await feed.CopyToAsync(rest).WaitAsync(TimeSpan.FromSeconds(15)); // and the page sees its end
    }

    [Fact]
    public async Task The_api_and_its_openapi_document_exist_only_on_the_admin_listener_behind_its_token()
    {
        const string Token = "an-admin-token-for-tests";
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0", "--admin-token", Token);
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        using var http = CallerHttp.Create();

        Assert.Equal(HttpStatusCode.Unauthorized, (await http.GetAsync(new Uri(admin, "/api/sessions"))).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await http.PostAsync(new Uri(admin, "/api/sessions/x/clients/1/drain"), null)).StatusCode);
        using (HttpResponseMessage onPublic = await http.GetAsync(new Uri(stack.PublicUrl, "/api/sessions")))
        {
            Assert.Equal(HttpStatusCode.NotFound, onPublic.StatusCode);
            Assert.Equal("application/problem+json", onPublic.Content.Headers.ContentType?.MediaType); // as any unknown public path
        }

        Assert.Equal(HttpStatusCode.NotFound, (await http.GetAsync(new Uri(stack.PublicUrl, "/openapi/v1.json"))).StatusCode);

        http.DefaultRequestHeaders.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Bearer", Token);
        using JsonDocument document = JsonDocument.Parse(await http.GetStringAsync(new Uri(admin, "/openapi/v1.json")));
        JsonElement paths = document.RootElement.GetProperty("paths");
        foreach (string path in new[] { "/api/server", "/api/sessions", "/api/sessions/{session}", "/api/sessions/{session}/clients/{client}/drain", "/api/sessions/{session}/clients/{client}" })
        {
            Assert.True(paths.TryGetProperty(path, out _), $"the OpenAPI document describes {path}");
        }

        Assert.Equal("[]", await http.GetStringAsync(new Uri(admin, "/api/sessions")));
    }

    [Fact]
    public async Task The_dashboard_page_is_served_and_its_live_events_show_a_sessions_traffic_as_it_happens()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--admin-url", "http://127.0.0.1:0");
        Uri admin = stack.Server.Services.GetRequiredService<ServerEndpoints>().AdminUrl!;
        string session = "live-" + Guid.NewGuid().ToString("N")[..8];
        await stack.StartClientAsync(session);
        using var http = CallerHttp.Create();

        using (HttpResponseMessage page = await http.GetAsync(admin))
        {
            Assert.Equal(HttpStatusCode.OK, page.StatusCode);
            Assert.Equal("text/html", page.Content.Headers.ContentType?.MediaType);
            string html = await page.Content.ReadAsStringAsync();
            Assert.Contains("new EventSource(withToken(\"/api/live\"))", html, StringComparison.Ordinal);
            Assert.DoesNotContain("https://", html, StringComparison.Ordinal); // every asset is inline: no CDN
        }

        Assert.Equal(HttpStatusCode.NotFound, (await http.GetAsync(stack.PublicUrl)).StatusCode); // not on the public port

        // Read the event stream; traffic sent after it opened must show in a later event.
        using var events = new HttpRequestMessage(HttpMethod.Get, new Uri(admin, "/api/live"));
        using HttpResponseMessage stream = await http.SendAsync(events, HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal("text/event-stream", stream.Content.Headers.ContentType?.MediaType);
        using var reader = new StreamReader(await stream.Content.ReadAsStreamAsync());
        JsonElement first = await NextSnapshotAsync(reader);
        Assert.Equal(0, SessionIn(first, session)?.GetProperty("requests").GetInt64() ?? 0);

        for (int i = 0; i < 12; i++)
        {
            Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"))).StatusCode);
        }

        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        JsonElement? seen = null;
        while (seen is null)
        {
            JsonElement snapshot = await NextSnapshotAsync(reader).WaitAsync(deadline.Token);
            if (SessionIn(snapshot, session) is { } live && live.GetProperty("requests").GetInt64() == 12)
            {
                seen = live;
            }
        }

        Assert.Equal(1, seen.Value.GetProperty("clients").GetInt32());
        Assert.True(seen.Value.GetProperty("p50Ms").GetDouble() > 0);
        Assert.True(seen.Value.GetProperty("p99Ms").GetDouble() >= seen.Value.GetProperty("p50Ms").GetDouble());
        Assert.Equal(12, seen.Value.GetProperty("perSecond").EnumerateArray().Sum(v => v.GetInt64()));
    }

    private static async Task<JsonElement> NextSnapshotAsync(StreamReader reader)
    {
        while (await reader.ReadLineAsync() is { } line)
        {
            if (line.StartsWith("data: ", StringComparison.Ordinal))
            {
                return JsonDocument.Parse(line["data: ".Length..]).RootElement.Clone();
            }
        }

        throw new EndOfStreamException("the event stream ended");
    }

    private static JsonElement? SessionIn(JsonElement snapshot, string session)
    {
        foreach (JsonElement entry in snapshot.GetProperty("sessions").EnumerateArray())
        {
            if (entry.GetProperty("id").GetString() == session)
            {
                return entry;
            }
        }

        return null;
    }

    private static async Task<JsonElement[]> ClientsAsync(HttpClient http, Uri admin, string session)
    {
        JsonElement detail = await http.GetFromJsonAsync<JsonElement>(new Uri(admin, $"/api/sessions/{session}"));
        return [.. detail.GetProperty("clients").EnumerateArray()];
    }

    private static async Task<List<long>> IdsAsync(HttpClient http, Uri admin, string session)
    {
        using HttpResponseMessage response = await http.GetAsync(new Uri(admin, $"/api/sessions/{session}"));
        if (response.StatusCode != HttpStatusCode.OK)
        {
            return [];
        }

        JsonElement detail = await response.Content.ReadFromJsonAsync<JsonElement>();
        return [.. detail.GetProperty("clients").EnumerateArray().Select(c => c.GetProperty("id").GetInt64())];
    }
}
