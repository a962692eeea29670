using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.HostileInput;

/// <summary>
/// A backend that sends bytes past the end of a response must never hand them to the next caller: the connection they
/// arrived on is closed, counted and logged, and every innocent request on the session gets its own answer.
/// </summary>
[Collection(TunnelCollection.Name)]
public sealed class ResponseDesyncTests(TunnelStackFixture fixture) : IAsyncLifetime
{
    private const string ClosedCounter = "tunnel2.client.backend_connections.closed";

    private readonly string _session = "desync-" + Guid.NewGuid().ToString("N");
    private readonly HttpClient _http = CallerHttp.Create();
    private MisbehavingBackend? _backend;
    private TunnelClientHandle? _client;
    private ClientCounter? _closed;

    private MisbehavingBackend Backend => _backend!;

    public async ValueTask InitializeAsync()
    {
        _backend = MisbehavingBackend.Start();
        _client = await fixture.Stack.StartClientAsync(_session, _backend.Url);
        _closed = new ClientCounter(_client.Host.Services, ClosedCounter, "cause");
    }

    public async ValueTask DisposeAsync()
    {
        _closed?.Dispose();
        _http.Dispose();
        if (_client is not null)
        {
            await _client.DisposeAsync();
        }

        if (_backend is not null)
        {
            await _backend.DisposeAsync();
        }
    }

    public static TheoryData<string, int, string, string> Cases => new()
    {
        { "two-responses", 200, "first", "bytes-after-response" },
        { "long-body", 200, "first", "bytes-after-response" },
        { "junk-after-body", 200, "first", "bytes-after-response" },
        { "head-with-body", 200, string.Empty, "bytes-after-response" },
        { "no-content-with-body", 204, string.Empty, "bytes-after-response" },
        { "not-modified-with-body", 304, string.Empty, "bytes-after-response" },
        { "data-after-last-chunk", 200, "first", "bytes-after-response" },
        { "length-and-chunked", 200, "first", "length-and-transfer-encoding" },
        { "late-response", 200, "first", "bytes-while-idle" },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Innocent_callers_after_a_misbehaving_response_each_get_their_own(string kind, int status, string body, string cause)
    {
        string target = "/bad/" + kind;
        using var request = new HttpRequestMessage(kind == "head-with-body" ? HttpMethod.Head : HttpMethod.Get, Url(target));
        using HttpResponseMessage first = await _http.SendAsync(request);

        // The caller whose response was well-framed gets it whole, as the framing delimits it.
        Assert.Equal(status, (int)first.StatusCode);
        Assert.Equal(body, await first.Content.ReadAsStringAsync());
        if (kind == "late-response")
        {
            await Eventually.WaitUntilAsync(() => Backend.LateResponsesSent == 1, "the backend wrote its late answer on the idle connection");
        }

        for (int i = 0; i < 3; i++)
        {
            string answer = await _http.GetStringAsync(Url($"/innocent/{kind}-{i}"));
            Assert.Equal($"innocent-{kind}-{i}", answer);
        }

        // The connection the misbehaving answer came on was closed by the tunnel, and the cause was counted.
        await Eventually.WaitUntilAsync(() => Backend.ConnectionOfClosedByPeer(target), $"the client closed the connection that carried {target}");
        Assert.Equal(1, _closed![cause]);
        Assert.Equal(1 + 3, Backend.Requests.Count);
    }

    [Theory]
    [InlineData("bare-lf-in-head")]
    [InlineData("control-in-head")]
    [InlineData("folded-head")]
    public async Task A_malformed_response_head_is_a_502_its_connection_is_closed_and_innocent_callers_get_their_own(string kind)
    {
        string target = "/bad/" + kind;
        using HttpResponseMessage first = await _http.GetAsync(Url(target));

        Assert.Equal(HttpStatusCode.BadGateway, first.StatusCode);
        Assert.Equal("application/problem+json", first.Content.Headers.ContentType?.MediaType);
        string problem = await first.Content.ReadAsStringAsync();
        Assert.DoesNotContain("INJECTED", problem, StringComparison.Ordinal);
        Assert.Contains("urn:tunnel2:problem:bad-gateway", problem, StringComparison.Ordinal);
        for (int i = 0; i < 3; i++)
        {
            Assert.Equal($"innocent-{kind}-{i}", await _http.GetStringAsync(Url($"/innocent/{kind}-{i}")));
        }

        await Eventually.WaitUntilAsync(() => Backend.ConnectionOfClosedByPeer(target), $"the client closed the connection that carried {target}");
        Assert.Equal(1, _closed!["exchange-failed"]);
        Assert.Equal(1 + 3, Backend.Requests.Count);
    }

    [Fact]
    public async Task A_well_framed_backend_keeps_its_connection_for_every_request()
    {
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal($"innocent-{i}", await _http.GetStringAsync(Url($"/innocent/{i}")));
        }

        Assert.Equal(0, _closed!["bytes-after-response"]);
        Assert.Equal(0, _closed["exchange-failed"]);
        Assert.False(Backend.ConnectionOfClosedByPeer("/innocent/0"));
    }

    [Fact]
    public async Task Malformed_answers_in_a_row_do_not_get_the_client_passed_over()
    {
        // Passing a client over (ProxyEntry:Balancing:EjectAfter, 3) is for a backend that cannot be reached. A backend
        // that answers, badly, is not that: were it counted, a session with one client would answer everyone 503 after
        // three bad answers in a row (a crowd of callers beside a few bad answers used to meet exactly that).
        for (int i = 0; i < 5; i++)
        {
            using HttpResponseMessage bad = await _http.GetAsync(Url($"/bad/folded-head?n={i}"));
            Assert.Equal(HttpStatusCode.BadGateway, bad.StatusCode);
        }

        Assert.Equal("innocent-after-five", await _http.GetStringAsync(Url("/innocent/after-five")));
    }

    [Fact]
    public async Task A_crowd_of_innocent_callers_beside_misbehaving_responses_each_get_their_own()
    {
        // 40 misbehaving answers spread over the kinds, among 160 innocent requests, all at once on one session. A late
        // answer is left out here: one that arrives after the next request went out on the connection looks like that
        // request's answer to any HTTP/1.1 client (nginx included); the tunnel's promise is about bytes that arrive
        // while the connection is idle, which the theory above checks.
        string[] kinds = [.. MisbehavingBackend.Misbehaviours.Where(kind => kind != "late-response")];
        var calls = new List<Task>();
        for (int i = 0; i < 200; i++)
        {
            if (i % 5 == 0)
            {
                string kind = kinds[i / 5 % kinds.Length];
                HttpMethod method = kind == "head-with-body" ? HttpMethod.Head : HttpMethod.Get;
                calls.Add(SendBadAsync(method, $"/bad/{kind}?n={i}"));
            }
            else
            {
                calls.Add(ExpectOwnAnswerAsync(i));
            }
        }

        await Task.WhenAll(calls);

        Assert.Equal(200, Backend.Requests.Count);
        Assert.True(_closed!["bytes-after-response"] > 0);
    }

    private async Task SendBadAsync(HttpMethod method, string target)
    {
        using var request = new HttpRequestMessage(method, Url(target));
        using HttpResponseMessage response = await _http.SendAsync(request);
        string body = await response.Content.ReadAsStringAsync();
        Assert.DoesNotContain("INJECTED", body, StringComparison.Ordinal);
        Assert.DoesNotContain("innocent", body, StringComparison.Ordinal);
    }

    private async Task ExpectOwnAnswerAsync(int i)
    {
        using HttpResponseMessage response = await _http.GetAsync(Url($"/innocent/crowd-{i}"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal($"innocent-crowd-{i}", await response.Content.ReadAsStringAsync());
    }

    private Uri Url(string pathAndQuery) => fixture.Stack.SessionUrl(_session, pathAndQuery);
}
