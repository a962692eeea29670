using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.HostileInput;

/// <summary>
/// What the public edge refuses before a byte reaches the uplink, and how it resolves paths, sent as raw bytes
/// (an HttpClient would normalize the target and refuse the odd names itself) to a backend that records every request.
/// </summary>
[Collection(TunnelCollection.Name)]
public sealed class PublicEdgeRefusalTests(TunnelStackFixture fixture) : IAsyncLifetime
{
    private readonly string _session = "edge-" + Guid.NewGuid().ToString("N");
    private readonly string _other = "edge-other-" + Guid.NewGuid().ToString("N");
    private MisbehavingBackend? _backend;
    private MisbehavingBackend? _otherBackend;
    private TunnelClientHandle? _client;
    private TunnelClientHandle? _otherClient;

    public async ValueTask InitializeAsync()
    {
        _backend = MisbehavingBackend.Start();
        _otherBackend = MisbehavingBackend.Start();
        _client = await fixture.Stack.StartClientAsync(_session, _backend.Url);
        _otherClient = await fixture.Stack.StartClientAsync(_other, _otherBackend.Url);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (TunnelClientHandle? client in new[] { _client, _otherClient })
        {
            if (client is not null)
            {
                await client.DisposeAsync();
            }
        }

        foreach (MisbehavingBackend? backend in new[] { _backend, _otherBackend })
        {
            if (backend is not null)
            {
                await backend.DisposeAsync();
            }
        }
    }

    [Theory]
    [InlineData("/c/../d", "/d")]
    [InlineData("/./c", "/c")]
    [InlineData("/a/b/..", "/a/")]
    [InlineData("/a/%2e%2e/d", "/d")]
    [InlineData("/a/.%2E/d?q=1", "/d?q=1")]
    [InlineData("/a/%2E./d", "/d")]
    [InlineData("/c#fragment", "/c")]
    [InlineData("/c?q=1#fragment", "/c?q=1")]
    [InlineData("/a%2Fb/c", "/a%2Fb/c")]
    [InlineData("/a%2F..%2Fb", "/a%2F..%2Fb")]
    public async Task Dot_segments_are_resolved_and_the_fragment_dropped_before_forwarding(string path, string expected)
    {
        RawCaller.Answer answer = await GetAsync($"/session/{_session}{path}");

        Assert.Equal(200, answer.Status);
        ReceivedRequest received = Assert.Single(_backend!.Requests);
        Assert.Equal(expected, received.Target);
        Assert.Contains($"X-Forwarded-Prefix: /session/{_session}", received.HeaderLines);
    }

    [Theory]
    [InlineData("/session/{other}/../{session}/c")]
    [InlineData("/session/{other}/%2e%2e/{session}/c")]
    [InlineData("/session/{other}/.%2E/{session}/c")]
    [InlineData("/session/{session}/c/../..")]
    [InlineData("/session/{session}/c/../../{other}/c")]
    [InlineData("/session/{session}/%2e%2e/%2e%2e/etc/passwd")]
    public async Task A_path_that_climbs_above_its_session_is_refused_and_reaches_no_backend(string template)
    {
        string target = template.Replace("{session}", _session, StringComparison.Ordinal).Replace("{other}", _other, StringComparison.Ordinal);

        RawCaller.Answer answer = await GetAsync(target);

        Assert.Equal(400, answer.Status);
        Assert.True(answer.HasHeader("Content-Type: application/problem+json"), answer.Head);
        Assert.Contains("urn:tunnel2:problem:path-outside-session", answer.Body, StringComparison.Ordinal);
        Assert.Empty(_backend!.Requests);
        Assert.Empty(_otherBackend!.Requests);
    }

    public static TheoryData<string> BadNames => new()
    {
        "Transfer-Encoding\u000b", "X\u0001a", "X\u001fa", "X\u007fa", "X(a)", "X)a", "X,a", "X/a", "X;a", "X<a", "X>a",
        "X=a", "X?a", "X@a", "X[a", "X]a", "X\\a", "X{a", "X}a", "X\"a", "X\u00e9a", "X\u00ffa", " X", "X a", "X\ta",
    };

    [Theory]
    [MemberData(nameof(BadNames))]
    public async Task A_header_name_outside_token_is_refused_with_400_before_the_uplink(string name)
    {
        RawCaller.Answer answer = await RawCaller.SendAsync(fixture.Stack.PublicUrl,
            $"POST /session/{_session}/upload HTTP/1.1\r\nHost: x\r\n{name}: chunked\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");

        Assert.Equal(400, answer.Status);
        Assert.Empty(_backend!.Requests);
    }

    [Fact]
    public async Task A_smuggling_shaped_name_gets_problem_details_naming_the_reason()
    {
        RawCaller.Answer answer = await RawCaller.SendAsync(fixture.Stack.PublicUrl,
            $"POST /session/{_session}/upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding\u000b: chunked\r\nContent-Length: 48\r\nConnection: close\r\n\r\n"
            + "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\nX: xxxxxxxx");

        Assert.Equal(400, answer.Status);
        Assert.Contains("urn:tunnel2:problem:invalid-header", answer.Body, StringComparison.Ordinal);
        Assert.Empty(_backend!.Requests);
    }

    [Fact]
    public async Task Content_length_beside_transfer_encoding_is_refused_with_400()
    {
        RawCaller.Answer answer = await RawCaller.SendAsync(fixture.Stack.PublicUrl,
            $"POST /session/{_session}/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 48\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n");

        Assert.Equal(400, answer.Status);
        Assert.Contains("urn:tunnel2:problem:ambiguous-framing", answer.Body, StringComparison.Ordinal);
        Assert.Empty(_backend!.Requests);
    }

    [Theory]
    [InlineData("gzip, chunked")]
    [InlineData("deflate, chunked")]
    public async Task A_transfer_coding_other_than_chunked_is_refused_with_501(string codings)
    {
        RawCaller.Answer answer = await RawCaller.SendAsync(fixture.Stack.PublicUrl,
            $"POST /session/{_session}/upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: {codings}\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n");

        Assert.Equal(501, answer.Status);
        Assert.Contains("urn:tunnel2:problem:unsupported-transfer-coding", answer.Body, StringComparison.Ordinal);
        Assert.Empty(_backend!.Requests);
    }

    [Fact]
    public async Task A_plain_chunked_upload_still_arrives_whole()
    {
        RawCaller.Answer answer = await RawCaller.SendAsync(fixture.Stack.PublicUrl,
            $"POST /session/{_session}/upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");

        Assert.Equal(200, answer.Status);
        ReceivedRequest received = Assert.Single(_backend!.Requests);
        Assert.Equal("hello world", Encoding.ASCII.GetString(received.Body));
        Assert.DoesNotContain(received.HeaderLines, line => line.StartsWith("X-Content-Length", StringComparison.OrdinalIgnoreCase));
    }

    private Task<RawCaller.Answer> GetAsync(string target) =>
        RawCaller.SendAsync(fixture.Stack.PublicUrl, $"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}
