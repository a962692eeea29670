using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelClient.Inspection;

namespace Tunnel2.EndToEndTests.Observability;

/// <summary>
/// The client's request inspector (<c>--inspect-url</c>) with real parts: requests through the public port, then its
/// API read over HTTP. Kept exchanges, redaction, body and count bounds, replay as is and edited, and HAR export.
/// </summary>
public sealed class InspectorTests
{
    private const string AdminToken = "an-inspector-token-for-tests";

    [Fact]
    public async Task The_inspector_keeps_a_request_and_its_response_with_secrets_redacted_and_requires_the_admin_token()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        string session = "inspect-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session, backend.Url, extraArgs: ["--admin-token", AdminToken]);
        Uri inspector = client.InspectorUrl;

        using var http = CallerHttp.Create();
        using var request = new HttpRequestMessage(HttpMethod.Post, stack.SessionUrl(session, "/orders?priority=high"))
        {
            Content = new StringContent("""{"item":"tea","count":2}""", Encoding.UTF8, "application/json"),
        };
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", "caller-secret");
        request.Headers.Add("Cookie", "session=caller-cookie");
        using HttpResponseMessage response = await http.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        string answer = await response.Content.ReadAsStringAsync();

        Assert.Equal(HttpStatusCode.Unauthorized, (await http.GetAsync(new Uri(inspector, "/api/requests"))).StatusCode);
        using HttpClient api = InspectorApi(AdminToken);
        JsonElement exchange = await NewestKeptAsync(api, inspector, "the request is kept");

        Assert.Equal("completed", exchange.GetProperty("outcome").GetString());
        Assert.Equal(backend.Url.GetLeftPart(UriPartial.Authority), exchange.GetProperty("backend").GetString());
        Assert.True(exchange.GetProperty("waitMs").GetDouble() > 0);
        Assert.True(exchange.GetProperty("durationMs").GetDouble() >= exchange.GetProperty("waitMs").GetDouble());
        JsonElement sent = exchange.GetProperty("request");
        Assert.Equal("POST", sent.GetProperty("method").GetString());
        Assert.Equal("/orders?priority=high", sent.GetProperty("target").GetString());
        Assert.Equal("""{"item":"tea","count":2}""", sent.GetProperty("body").GetProperty("text").GetString());
        Assert.Equal(InspectorRedaction.Placeholder, Header(sent, "Authorization"));
        Assert.Equal(InspectorRedaction.Placeholder, Header(sent, "Cookie"));
        JsonElement answered = exchange.GetProperty("response");
        Assert.Equal(200, answered.GetProperty("status").GetInt32());
        Assert.Equal(answer, answered.GetProperty("body").GetProperty("text").GetString());
        Assert.Equal(InspectorRedaction.Placeholder, Header(answered, "Set-Cookie"));
        Assert.DoesNotContain("caller-secret", await api.GetStringAsync(new Uri(inspector, "/api/requests")), StringComparison.Ordinal);

        // One by id, and the problem for one not kept.
        long id = exchange.GetProperty("id").GetInt64();
        using JsonDocument one = JsonDocument.Parse(await api.GetStringAsync(new Uri(inspector, $"/api/requests/{id}")));
        Assert.Equal(id, one.RootElement.GetProperty("id").GetInt64());
        using HttpResponseMessage missing = await api.GetAsync(new Uri(inspector, "/api/requests/999999"));
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
        Assert.Equal("application/problem+json", missing.Content.Headers.ContentType?.MediaType);
    }

    [Fact]
    public async Task Secrets_are_shown_when_revealed_and_the_inspector_is_absent_unless_asked_for()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        string session = "reveal-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle revealing = await stack.StartInspectedClientAsync(session, backend.Url,
            extraArgs: ["--inspect-reveal-secrets", "true"]);
        TunnelClientHandle plain = await stack.StartClientAsync("plain-" + session, backend.Url);
        Assert.Null(plain.Host.Services.GetService<RequestInspector>());

        using var http = CallerHttp.Create();
        using var request = new HttpRequestMessage(HttpMethod.Get, stack.SessionUrl(session, "/"));
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", "caller-secret");
        (await http.SendAsync(request)).EnsureSuccessStatusCode();

        using HttpClient api = InspectorApi(token: null);
        Uri inspector = revealing.InspectorUrl;
        JsonElement exchange = await NewestKeptAsync(api, inspector, "the request is kept");
        Assert.Equal("Bearer caller-secret", Header(exchange.GetProperty("request"), "Authorization"));
        // The response as the caller got it: the cookie's path moved under the session (--rewrite-paths).
        Assert.Equal($"sid=backend-secret; Path=/session/{session}/", Header(exchange.GetProperty("response"), "Set-Cookie"));
    }

    [Fact]
    public async Task Under_a_crowd_of_1000_requests_the_inspector_keeps_only_the_last_N_and_each_body_only_up_to_its_limit()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        string session = "crowd-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session, maxConcurrency: 1000,
            extraArgs: ["--inspect-capacity", "50", "--inspect-body-limit", "1000"]);
        RequestInspector kept = client.Host.Services.GetRequiredService<RequestInspector>();

        byte[] body = new byte[5000];
        new Random(7).NextBytes(body);
        using var http = CallerHttp.Create();
        HttpStatusCode[] statuses = await Task.WhenAll(Enumerable.Range(0, 1000).Select(async i =>
        {
            using var content = new ByteArrayContent(body);
            content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
            using HttpResponseMessage response = await http.PostAsync(stack.SessionUrl(session, $"/loadtest/echo?i={i}"), content);
            Assert.Equal(body, await response.Content.ReadAsByteArrayAsync()); // the tap changes nothing on the way
            return response.StatusCode;
        }));

        Assert.All(statuses, status => Assert.Equal(HttpStatusCode.OK, status));
        await Eventually.WaitUntilAsync(() => kept.Snapshot().Count == 50 && kept.Snapshot()[0].Id >= 1000, "the last 1,000 exchanges are recorded");
        List<InspectedExchange> last = kept.Snapshot();
        Assert.Equal(50, last.Count);
        Assert.Equal(50, last.Select(exchange => exchange.Id).Distinct().Count());
        Assert.All(last, exchange =>
        {
            Assert.Equal(InspectionOutcome.Completed, exchange.Outcome);
            Assert.Equal(5000, exchange.RequestBody!.Size);
            Assert.Equal(body.AsSpan(0, 1000).ToArray(), exchange.RequestBody.Bytes);
            Assert.Equal(5000, exchange.ResponseBody!.Size);
            Assert.Equal(1000, exchange.ResponseBody.Bytes.Length);
        });

        // A body cut at the limit cannot be replayed as is: 409, and the reason.
        using HttpClient api = InspectorApi(token: null);
        Uri inspector = client.InspectorUrl;
        using HttpResponseMessage refused = await api.PostAsync(new Uri(inspector, $"/api/requests/{last[0].Id}/replay"), null);
        Assert.Equal(HttpStatusCode.Conflict, refused.StatusCode);
        using JsonDocument problem = JsonDocument.Parse(await refused.Content.ReadAsStringAsync());
        Assert.Contains("first 1000 of the body's 5000 bytes", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_replay_as_is_and_an_edited_one_reach_the_backend_and_are_kept_as_replays()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        string session = "replay-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session, backend.Url);
        Uri inspector = client.InspectorUrl;

        using var http = CallerHttp.Create();
        using var request = new HttpRequestMessage(HttpMethod.Put, stack.SessionUrl(session, "/items/7"))
        {
            Content = new StringContent("first version", Encoding.UTF8, "text/plain"),
        };
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", "caller-secret");
        (await http.SendAsync(request)).EnsureSuccessStatusCode();
        using HttpClient api = InspectorApi(token: null);
        JsonElement original = await NewestKeptAsync(api, inspector, "the request is kept");
        long id = original.GetProperty("id").GetInt64();

        using HttpResponseMessage asIs = await api.PostAsync(new Uri(inspector, $"/api/requests/{id}/replay"), null);
        Assert.Equal(HttpStatusCode.OK, asIs.StatusCode);
        using JsonDocument replayed = JsonDocument.Parse(await asIs.Content.ReadAsStringAsync());
        Assert.Equal(id, replayed.RootElement.GetProperty("replayOf").GetInt64());
        Assert.Equal(200, replayed.RootElement.GetProperty("response").GetProperty("status").GetInt32());
        Assert.Equal(2, backend.Received.Count);
        RecordingBackend.ReceivedRequest again = backend.Received.Last();
        Assert.Equal(("PUT", "/items/7", "first version", "Bearer caller-secret"), (again.Method, again.Target, again.Body, again.Headers["Authorization"]));
        Assert.Equal("text/plain; charset=utf-8", again.Headers["Content-Type"]);

        // Edited: method, target, a header and the body; the redacted Authorization placeholder stands for the original value.
        string edit = """
            {"method":"POST","target":"/items?edited=1","headers":[{"name":"Authorization","value":"[redacted]"},
             {"name":"Content-Type","value":"application/json"},{"name":"X-Edited","value":"yes"}],"body":"{\"v\":2}"}
            """;
        using HttpResponseMessage edited = await api.PostAsync(new Uri(inspector, $"/api/requests/{id}/replay"), new StringContent(edit, Encoding.UTF8, "application/json"));
        Assert.Equal(HttpStatusCode.OK, edited.StatusCode);
        RecordingBackend.ReceivedRequest changed = backend.Received.Last();
        Assert.Equal(("POST", "/items?edited=1", """{"v":2}""", "yes", "Bearer caller-secret"),
            (changed.Method, changed.Target, changed.Body, changed.Headers["X-Edited"], changed.Headers["Authorization"]));

        JsonElement[] kept = await ListAsync(api, inspector);
        Assert.Equal(3, kept.Length);
        Assert.All(kept.Take(2), exchange => Assert.Equal(id, exchange.GetProperty("replayOf").GetInt64()));

        // A bad edit is a 400 or 409 problem, not a crash; an upgrade request is not replayed.
        using HttpResponseMessage badJson = await api.PostAsync(new Uri(inspector, $"/api/requests/{id}/replay"), new StringContent("{not json", Encoding.UTF8, "application/json"));
        Assert.Equal(HttpStatusCode.BadRequest, badJson.StatusCode);
        using HttpResponseMessage badHeader = await api.PostAsync(new Uri(inspector, $"/api/requests/{id}/replay"),
            new StringContent("""{"headers":[{"name":"X-Bad","value":"a\r\nInjected: 1"}]}""", Encoding.UTF8, "application/json"));
        Assert.Equal(HttpStatusCode.Conflict, badHeader.StatusCode);
        Assert.Equal(3, backend.Received.Count);
    }

    [Fact]
    public async Task The_HAR_export_holds_every_kept_exchange_oldest_first_with_bodies_and_redacted_secrets()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        string session = "har-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session, backend.Url);
        Uri inspector = client.InspectorUrl;
        using var http = CallerHttp.Create();
        (await http.GetAsync(stack.SessionUrl(session, "/first?a=1&b=two"))).EnsureSuccessStatusCode();
        (await http.PostAsync(stack.SessionUrl(session, "/second"), new StringContent("posted", Encoding.UTF8, "text/plain"))).EnsureSuccessStatusCode();
        using HttpClient api = InspectorApi(token: null);
        await Eventually.WaitUntilAsync(async () => (await ListAsync(api, inspector)).Length == 2, "both requests are kept");

        using HttpResponseMessage har = await api.GetAsync(new Uri(inspector, "/api/requests.har"));
        Assert.Equal("attachment", har.Content.Headers.ContentDisposition?.DispositionType);
        using JsonDocument document = JsonDocument.Parse(await har.Content.ReadAsStringAsync());
        JsonElement log = document.RootElement.GetProperty("log");
        Assert.Equal("1.2", log.GetProperty("version").GetString());
        JsonElement[] entries = [.. log.GetProperty("entries").EnumerateArray()];
        Assert.Equal(2, entries.Length);
        string origin = backend.Url.GetLeftPart(UriPartial.Authority);
        Assert.Equal($"{origin}/first?a=1&b=two", entries[0].GetProperty("request").GetProperty("url").GetString());
        Assert.Equal(["a=1", "b=two"], entries[0].GetProperty("request").GetProperty("queryString").EnumerateArray()
            .Select(pair => $"{pair.GetProperty("name").GetString()}={pair.GetProperty("value").GetString()}"));
        Assert.Equal("posted", entries[1].GetProperty("request").GetProperty("postData").GetProperty("text").GetString());
        JsonElement response = entries[1].GetProperty("response");
        Assert.Equal(200, response.GetProperty("status").GetInt32());
        Assert.Equal("OK", response.GetProperty("statusText").GetString());
        Assert.Contains("\"target\":\"/second\"", response.GetProperty("content").GetProperty("text").GetString(), StringComparison.Ordinal);
        Assert.Contains(response.GetProperty("headers").EnumerateArray(),
            header => header.GetProperty("name").GetString() == "Set-Cookie" && header.GetProperty("value").GetString() == InspectorRedaction.Placeholder);
        Assert.True(entries[0].GetProperty("timings").GetProperty("wait").GetDouble() > 0);

        // Cleared: the list and the export are empty.
        Assert.Equal(HttpStatusCode.NoContent, (await api.DeleteAsync(new Uri(inspector, "/api/requests"))).StatusCode);
        Assert.Empty(await ListAsync(api, inspector));
    }

    [Fact]
    public async Task A_request_the_backend_never_answers_is_kept_as_failed_with_the_reason()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        string session = "failed-" + Guid.NewGuid().ToString("N")[..8];
        var dead = new Uri("http://127.0.0.1:1");
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session, dead);
        Uri inspector = client.InspectorUrl;

        using var http = CallerHttp.Create();
        Assert.Equal(HttpStatusCode.BadGateway, (await http.GetAsync(stack.SessionUrl(session, "/nothing-here"))).StatusCode);
        using HttpClient api = InspectorApi(token: null);
        JsonElement exchange = await NewestKeptAsync(api, inspector, "the failed request is kept");
        Assert.Equal("failed", exchange.GetProperty("outcome").GetString());
        Assert.StartsWith("backend-unreachable:", exchange.GetProperty("error").GetString(), StringComparison.Ordinal);
        Assert.Equal(JsonValueKind.Null, exchange.GetProperty("response").ValueKind);
    }

    [Fact]
    public async Task An_open_inspector_page_feed_ends_when_the_client_stops_instead_of_holding_its_shutdown()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        string session = "stop-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session);
        Uri inspector = client.InspectorUrl;
        using HttpClient api = InspectorApi(token: null);
        using HttpResponseMessage live = await api.GetAsync(new Uri(inspector, "/api/requests/live"), HttpCompletionOption.ResponseHeadersRead);
        await using Stream feed = await live.Content.ReadAsStreamAsync();
        Assert.True(await feed.ReadAsync(new byte[1]) > 0); // the greeting event arrived: the feed is open

        await client.StopAsync().WaitAsync(TimeSpan.FromSeconds(15)); // the host's shutdown timeout is 40 s
        using var rest = new MemoryStream();
        await feed.CopyToAsync(rest).WaitAsync(TimeSpan.FromSeconds(15));
    }

    [Fact]
    public async Task With_the_backend_connections_on_the_clients_loop_the_inspector_keeps_each_request_and_answer_whole()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await using RecordingBackend backend = await RecordingBackend.StartAsync();
        string session = "loop-" + Guid.NewGuid().ToString("N")[..8];
        TunnelClientHandle client = await stack.StartInspectedClientAsync(session, backend.Url, extraArgs: ["--TunnelClient:Backends:Relay=Loop"]);
        Assert.True(client.Host.Services.GetRequiredService<Tunnel2.TunnelClient.Backends.BackendSet>().UsesLoop, "the backend connections should be on the loop");
        Uri inspector = client.InspectorUrl;

        using var http = CallerHttp.Create();
        string[] answers = new string[3];
        for (int i = 0; i < answers.Length; i++)
        {
            using HttpResponseMessage response = await http.PostAsync(stack.SessionUrl(session, $"/loop/{i}"), new StringContent($"body {i}", Encoding.UTF8, "text/plain"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            answers[i] = await response.Content.ReadAsStringAsync();
        }

        using HttpClient api = InspectorApi(token: null);
        JsonElement[] kept = await Eventually.ValueAsync(() => ListAsync(api, inspector), list => list.Length == answers.Length, "every request is kept");
        foreach (JsonElement exchange in kept)
        {
            int i = int.Parse(exchange.GetProperty("request").GetProperty("target").GetString()!["/loop/".Length..], System.Globalization.CultureInfo.InvariantCulture);
            Assert.Equal("completed", exchange.GetProperty("outcome").GetString());
            Assert.Equal($"body {i}", exchange.GetProperty("request").GetProperty("body").GetProperty("text").GetString());
            Assert.Equal(200, exchange.GetProperty("response").GetProperty("status").GetInt32());
            Assert.Equal(answers[i], exchange.GetProperty("response").GetProperty("body").GetProperty("text").GetString());
        }
    }

    private static HttpClient InspectorApi(string? token)
    {
        HttpClient api = CallerHttp.Create();
        if (token is not null)
        {
            api.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
        }

        return api;
    }

    private static Task<JsonElement> NewestKeptAsync(HttpClient api, Uri inspector, string because) =>
        Eventually.ValueAsync(async () => (await ListAsync(api, inspector)).FirstOrDefault(), newest => newest.ValueKind == JsonValueKind.Object, because);

    private static async Task<JsonElement[]> ListAsync(HttpClient api, Uri inspector)
    {
        using JsonDocument list = JsonDocument.Parse(await api.GetStringAsync(new Uri(inspector, "/api/requests")));
        return [.. list.RootElement.GetProperty("requests").EnumerateArray().Select(element => element.Clone())];
    }

    private static string? Header(JsonElement message, string name)
    {
        foreach (JsonElement header in message.GetProperty("headers").EnumerateArray())
        {
            if (string.Equals(header.GetProperty("name").GetString(), name, StringComparison.OrdinalIgnoreCase))
            {
                return header.GetProperty("value").GetString();
            }
        }

        return null;
    }
}
