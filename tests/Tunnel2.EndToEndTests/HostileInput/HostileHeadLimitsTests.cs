using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.EndToEndTests.HostileInput;

/// <summary>
/// Header count and size limits at both ends: a public request over Kestrel's header count reaches no backend (the size
/// limit is <see cref="Crowds.LimitsTests"/>'), and a backend's response head with too many or too large fields is the
/// caller's 502 while the uplink and the session stay up for the next request.
/// </summary>
[Collection(TunnelCollection.Name)]
public sealed class HostileHeadLimitsTests(TunnelStackFixture fixture) : IAsyncLifetime
{
    private readonly string _session = "limits-" + Guid.NewGuid().ToString("N");
    private MisbehavingSession? _served;

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
    [InlineData(98, 200)] // with Host and Connection: Kestrel's MaxRequestHeaderCount (100) exactly
    [InlineData(99, 431)]
    [InlineData(5000, 431)]
    public async Task A_public_request_over_the_header_count_reaches_no_backend(int extra, int status)
    {
        var request = new StringBuilder($"GET /session/{_session}/count HTTP/1.1\r\nHost: x\r\n");
        for (int i = 0; i < extra; i++)
        {
            request.Append(System.Globalization.CultureInfo.InvariantCulture, $"X-H{i}: {i}\r\n");
        }

        RawCaller.Answer answer = await RawCaller.SendAsync(fixture.Stack.PublicUrl, request.Append("Connection: close\r\n\r\n").ToString());

        Assert.Equal(status, answer.Status);
        if (status == 200)
        {
            ReceivedRequest received = Assert.Single(Backend.Requests);
            Assert.Equal(extra, received.HeaderLines.Count(line => line.StartsWith("X-H", StringComparison.Ordinal)));
        }
        else
        {
            Assert.Empty(Backend.Requests);
        }
    }

    [Theory]
    [InlineData("many-headers")]
    [InlineData("huge-head")]
    [InlineData("zero-status")] // a status the head codec cannot carry (below 100), found by the response-head fuzzer
    public async Task A_backend_head_over_the_limits_is_a_502_and_the_uplink_and_session_stay_up(string kind)
    {
        Uplink uplink = Assert.Single(fixture.Stack.Registry.GetUplinks(_session));

        RawCaller.Answer answer = await GetAsync($"/bad/{kind}");

        // A malformed answer is a bad gateway, not an unreachable backend (which would count towards passing the client over).
        Assert.Equal(502, answer.Status);
        Assert.True(answer.HasHeader("Content-Type: application/problem+json"), answer.Head);
        Assert.Contains("urn:tunnel2:problem:bad-gateway", answer.Body, StringComparison.Ordinal);
        for (int i = 0; i < 3; i++)
        {
            RawCaller.Answer next = await GetAsync($"/innocent/{kind}-{i}");
            Assert.Equal(200, next.Status);
            Assert.Equal($"innocent-{kind}-{i}", next.Body);
        }

        // The same uplink carried all of it: the backend's head broke one exchange, not the tunnel.
        Assert.Same(uplink, Assert.Single(fixture.Stack.Registry.GetUplinks(_session)));
        Assert.Equal(1, _served!.Client.Status.ConnectCount);
        await Eventually.WaitUntilAsync(() => Backend.ConnectionOfClosedByPeer($"/bad/{kind}"), $"the client closed the connection that carried /bad/{kind}");
    }

    private Task<RawCaller.Answer> GetAsync(string pathAndQuery) =>
        RawCaller.SendAsync(fixture.Stack.PublicUrl, $"GET /session/{_session}{pathAndQuery} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}
