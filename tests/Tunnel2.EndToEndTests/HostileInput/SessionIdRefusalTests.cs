using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.HostileInput;

/// <summary>
/// Session ids no client can hold: 129 characters, a slash (plain or <c>%2F</c>), a dot-segment (plain or encoded).
/// On the public port such an id never reaches the backend of a session whose id it resembles; on the tunnel port a
/// login that declares one gets 400 <c>bad-session</c> and registers nothing.
/// </summary>
[Collection(TunnelCollection.Name)]
public sealed class SessionIdRefusalTests(TunnelStackFixture fixture) : IAsyncLifetime
{
    /// <summary>The longest id there is: every refused public id below starts with it or names it through a slash.</summary>
    private readonly string LongSession = "L" + Guid.NewGuid().ToString("N") + new string('l', 128 - 33); // one per test: a session shared by tests would meet the last one's uplink still leaving

    private MisbehavingSession? _served;

    private MisbehavingBackend Backend => _served!.Backend;

    public async ValueTask InitializeAsync() => _served = await MisbehavingSession.StartAsync(fixture.Stack, LongSession);

    public async ValueTask DisposeAsync()
    {
        if (_served is not null)
        {
            await _served.DisposeAsync();
        }
    }

    [Fact]
    public async Task The_128_character_session_itself_is_served()
    {
        Assert.Equal(128, LongSession.Length);

        RawCaller.Answer answer = await GetAsync($"/session/{LongSession}/innocent/long");

        Assert.Equal(200, answer.Status);
        Assert.Equal("innocent-long", answer.Body);
        Assert.Equal("/innocent/long", Assert.Single(Backend.Requests).Target);
    }

    [Theory]
    [InlineData("/session/{id}x/innocent/a", 404, "tunnel-not-found")] // 129 characters
    [InlineData("/session/{id}%2F/innocent/a", 404, "tunnel-not-found")]
    [InlineData("/session/{id}%2f..%2f/innocent/a", 404, "tunnel-not-found")]
    [InlineData("/session/x%2F{id}/innocent/a", 404, "tunnel-not-found")]
    [InlineData("/session/x%2F..%2F{id}/innocent/a", 404, "tunnel-not-found")]
    [InlineData("/session/..%2F{id}/innocent/a", 404, "tunnel-not-found")]
    [InlineData("/session/%2e%2e%2F{id}/innocent/a", 404, "tunnel-not-found")]
    [InlineData("/session/{id}%00/innocent/a", 400, null)] // Kestrel's own answer: a NUL in the decoded path
    [InlineData("/session/../session/{id}x/innocent/a", 400, "path-outside-session")]
    [InlineData("/session/%2e%2e/{id}/innocent/a", 400, "path-outside-session")]
    public async Task A_public_id_no_client_can_hold_reaches_no_backend(string template, int status, string? problem)
    {
        string target = template.Replace("{id}", LongSession, StringComparison.Ordinal);

        RawCaller.Answer answer = await GetAsync(target);

        Assert.Equal(status, answer.Status);
        if (problem is not null)
        {
            Assert.True(answer.HasHeader("Content-Type: application/problem+json"), answer.Head);
            Assert.Contains("urn:tunnel2:problem:" + problem, answer.Body, StringComparison.Ordinal);
        }

        Assert.Empty(Backend.Requests);
    }

    [Fact]
    public async Task A_dot_segment_in_place_of_the_id_resolves_like_any_other_and_stays_on_the_named_session()
    {
        // /session/./{id}/a is /session/{id}/a (RFC 3986 §5.2.4), as a browser would send it.
        RawCaller.Answer answer = await GetAsync($"/session/./{LongSession}/innocent/dot");

        Assert.Equal(200, answer.Status);
        Assert.Equal("innocent-dot", answer.Body);
        Assert.Equal("/innocent/dot", Assert.Single(Backend.Requests).Target);
    }

    [Theory]
    [InlineData("{129}")]
    [InlineData("a/b")]
    [InlineData("/")]
    [InlineData("a%2Fb")]
    [InlineData("..")]
    [InlineData(".")]
    [InlineData("%2e%2e")]
    [InlineData("a\\b")]
    public async Task A_login_declaring_such_a_session_gets_400_and_registers_nothing(string session)
    {
        session = session.Replace("{129}", LongSession + "x", StringComparison.Ordinal);
        using RawTunnelConnection connection = await RawTunnelConnection.OpenAsync(fixture.Stack.TunnelUrl);

        string answer = await connection.HandshakeAsync($"Authorization: Bearer {TunnelStack.Token}\r\n", session, version: "4");

        Assert.StartsWith("HTTP/1.1 400", answer, StringComparison.Ordinal);
        Assert.Contains("urn:tunnel2:problem:bad-session", answer, StringComparison.Ordinal);
        Assert.Empty(fixture.Stack.Registry.GetUplinks(session));
    }

    private Task<RawCaller.Answer> GetAsync(string target) =>
        RawCaller.SendAsync(fixture.Stack.PublicUrl, $"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}
