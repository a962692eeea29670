using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.HostileInput;

/// <summary>
/// Request-smuggling shapes sent as raw bytes through the public port, each judged by what the recording backend
/// actually received: nothing, or exactly one well-formed request with the expected target and body, never two. After
/// each, an ordinary request on the same session must get its own answer (the uplink and the client's backend
/// connection are not desynchronized). The shapes already pinned in <see cref="PublicEdgeRefusalTests"/> (header names
/// outside token, Content-Length beside Transfer-Encoding, a coding other than chunked) are not repeated here.
/// </summary>
[Collection(TunnelCollection.Name)]
public sealed class RequestSmugglingTests(TunnelStackFixture fixture) : IAsyncLifetime
{
    private const string Smuggled = "GET /innocent/smuggled HTTP/1.1\r\nHost: x\r\n\r\n";

    private readonly string _session = "smuggle-" + Guid.NewGuid().ToString("N");
    private MisbehavingSession? _served;

    /// <summary>
    /// One shape: the request (<c>{s}</c> is the session, <c>{smuggled}</c> a complete request, <c>{n}</c> its length,
    /// <c>{hex}</c> that in hex), the status the caller gets, and what the backend receives (null: no complete request).
    /// With <paramref name="HeadMayArrive"/> the head went ahead of a body that then proved malformed: the backend may
    /// have the head of that one request, never a complete request.
    /// </summary>
    public sealed record Shape(string Request, int Status, string? Target = null, string? Body = null, string? Problem = null, bool HeadMayArrive = false);

    private static readonly Dictionary<string, Shape> Shapes = new()
    {
        // Content-Length twice, equal or not: Kestrel refuses the request before ProxyEntry sees it.
        ["two-equal-lengths"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", 400),
        ["two-different-lengths"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: {n}\r\nConnection: close\r\n\r\nhello{smuggled}", 400),
        ["length-list"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\nConnection: close\r\n\r\nhello", 400),
        ["length-with-plus"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\nConnection: close\r\n\r\nhello", 200, "/up", "hello"),

        // Obfuscated Transfer-Encoding: a final coding that is not chunked is refused; white space Kestrel trims is chunked.
        ["te-xchunked"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400),
        ["te-chunked-identity"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400),
        ["te-leading-space"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 200, "/up", "hello"),
        ["te-tab"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tchunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 200, "/up", "hello"),
        ["te-upper-case"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: CHUNKED\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 200, "/up", "hello"),
        ["te-twice"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400),
        ["te-obs-fold"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", 400),
        ["te-space-before-colon"] = new("POST /session/{s}/up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", 400),

        // Line breaks and controls inside a header value, and obs-fold in an ordinary header.
        ["obs-fold"] = new("GET /session/{s}/fold HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\nConnection: close\r\n\r\n", 400),
        ["cr-in-value"] = new("GET /session/{s}/cr HTTP/1.1\r\nHost: x\r\nX-A: 1\rContent-Length: {n}\r\nConnection: close\r\n\r\n{smuggled}", 400),
        ["lf-in-value"] = new("GET /session/{s}/lf HTTP/1.1\r\nHost: x\r\nX-A: 1\nContent-Length: {n}\r\nConnection: close\r\n\r\n{smuggled}", 200, "/lf", Smuggled),
        ["nul-in-value"] = new("GET /session/{s}/nul HTTP/1.1\r\nHost: x\r\nX-A: 1\0Content-Length: 5\r\nConnection: close\r\n\r\n", 400),
        ["lf-line-ends"] = new("GET /session/{s}/lf-only HTTP/1.1\nHost: x\nConnection: close\n\n", 200, "/lf-only", ""),

        // Absolute-form targets: ProxyEntry routes origin-form /session/{id}/ only; a Host that disagrees is Kestrel's 400.
        ["absolute-form"] = new("GET http://x/session/{s}/abs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404),
        ["absolute-form-other-host"] = new("GET http://other.example/session/{s}/abs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400),
        ["authority-form"] = new("CONNECT x:80 HTTP/1.1\r\nHost: x:80\r\nConnection: close\r\n\r\n", 404),

        // Encoded slashes and dot-segments in the rest of the path travel as they came or resolve inside the session.
        ["encoded-slash"] = new("GET /session/{s}/a%2F..%2F..%2Fb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200, "/a%2F..%2F..%2Fb", ""),
        ["encoded-dots"] = new("GET /session/{s}/a/%2e%2e/%2E%2E%2Fb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200, "/%2E%2E%2Fb", ""),
        ["backslash-dots"] = new("GET /session/{s}/a/..%5C..%5Cb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200, "/a/..%5C..%5Cb", ""),

        // A whole request hidden in a body stays a body: the backend sees one request carrying those bytes.
        ["request-in-length-body"] = new("POST /session/{s}/carrier HTTP/1.1\r\nHost: x\r\nContent-Length: {n}\r\nConnection: close\r\n\r\n{smuggled}", 200, "/carrier", Smuggled),
        ["request-in-chunked-body"] = new("POST /session/{s}/carrier HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{hex}\r\n{smuggled}\r\n0\r\n\r\n", 200, "/carrier", Smuggled),
        ["request-after-last-chunk"] = new("POST /session/{s}/carrier HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n{smuggled}", 200, "/carrier", "hello"),
        ["request-after-length-body"] = new("POST /session/{s}/carrier HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello{smuggled}", 200, "/carrier", "hello"),
        // A malformed chunked body: the head went ahead, the body never completes, and the caller's fault is a 400.
        ["chunk-bad-suffix"] = new("POST /session/{s}/carrier HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhelloXX{smuggled}0\r\n\r\n", 400, Problem: "invalid-request-body", HeadMayArrive: true),
        ["chunk-lf-only"] = new("POST /session/{s}/carrier HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\nhello\n0\n\n", 400, Problem: "invalid-request-body", HeadMayArrive: true),
        ["chunk-size-overflow"] = new("POST /session/{s}/carrier HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n", 400, Problem: "invalid-request-body", HeadMayArrive: true),
    };

    public static TheoryData<string> ShapeNames => [.. Shapes.Keys];

    private MisbehavingBackend Backend => _served!.Backend;

    public async ValueTask InitializeAsync() => _served = await MisbehavingSession.StartAsync(fixture.Stack, _session);

    public async ValueTask DisposeAsync()
    {
        if (_served is not null)
        {
            await _served.DisposeAsync();
        }
    }

    [Theory]
    [MemberData(nameof(ShapeNames))]
    public async Task The_backend_sees_one_well_formed_request_or_none_and_the_session_keeps_working(string name)
    {
        Shape shape = Shapes[name];
        string request = shape.Request
            .Replace("{s}", _session, StringComparison.Ordinal)
            .Replace("{n}", Smuggled.Length.ToString(System.Globalization.CultureInfo.InvariantCulture), StringComparison.Ordinal)
            .Replace("{hex}", Smuggled.Length.ToString("x", System.Globalization.CultureInfo.InvariantCulture), StringComparison.Ordinal)
            .Replace("{smuggled}", Smuggled, StringComparison.Ordinal);

        RawCaller.Answer answer = await RawCaller.SendAsync(fixture.Stack.PublicUrl, request);

        Assert.True(shape.Status == answer.Status, $"{answer.Status}: {answer.Body}");
        Assert.DoesNotContain("innocent-smuggled", answer.Body, StringComparison.Ordinal);
        if (shape.Problem is not null)
        {
            Assert.True(answer.Body.Contains("urn:tunnel2:problem:" + shape.Problem, StringComparison.Ordinal), answer.Body);
        }

        Assert.True(Backend.RequestLines.Count <= 1, string.Join(" | ", Backend.RequestLines));
        if (shape.Target is null)
        {
            Assert.Empty(Backend.Requests);
            Assert.True(shape.HeadMayArrive || Backend.RequestLines.Count == 0, string.Join(" | ", Backend.RequestLines));
        }
        else
        {
            ReceivedRequest received = Assert.Single(Backend.Requests);
            Assert.Equal(shape.Target, received.Target);
            Assert.Equal(shape.Body, Encoding.Latin1.GetString(received.Body));
            AssertWellFormed(received);
        }

        // The same session answers the next caller with its own response, and the backend saw that request once.
        int before = Backend.Requests.Count;
        RawCaller.Answer next = await RawCaller.SendAsync(fixture.Stack.PublicUrl,
            $"GET /session/{_session}/innocent/{name} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        Assert.Equal(200, next.Status);
        Assert.Equal($"innocent-{name}", next.Body);
        Assert.Equal(before + 1, Backend.Requests.Count);
        // Counted by its own line: a refused head that may reach the backend can land there after the caller's 400.
        Assert.Single(Backend.RequestLines, line => line.Contains($"/innocent/{name} ", StringComparison.Ordinal));
        Assert.DoesNotContain(Backend.Requests, received => received.Target.Contains("smuggled", StringComparison.Ordinal));
    }

    /// <summary>One framing header at most, and no header line that a parser could split, fold or cut.</summary>
    private static void AssertWellFormed(ReceivedRequest received)
    {
        int lengths = received.HeaderLines.Count(line => line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase));
        int codings = received.HeaderLines.Count(line => line.StartsWith("Transfer-Encoding:", StringComparison.OrdinalIgnoreCase));
        Assert.True(lengths + codings <= 1, string.Join(" | ", received.HeaderLines));
        Assert.True(codings == 0 || received.HeaderLines.Contains("Transfer-Encoding: chunked"), string.Join(" | ", received.HeaderLines));
        Assert.True(lengths == 0 || received.HeaderLines.Contains($"Content-Length: {received.Body.Length}"), string.Join(" | ", received.HeaderLines));
        foreach (string line in received.HeaderLines)
        {
            Assert.True(line.Length > 0 && line[0] is not (' ' or '\t') && line.IndexOfAny(['\r', '\n', '\0']) < 0 && line.Contains(':', StringComparison.Ordinal),
                $"a malformed header line reached the backend: '{line}'");
        }
    }
}
