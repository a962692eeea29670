using System.Net;
using System.Net.Http.Headers;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.ProxyEntry.Access;
using static Tunnel2.EndToEndTests.Access.CredentialsFileTests;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>
/// The failed-attempt limits of a TunnelServer process, tried as a guesser would: one guess every 100 ms, and a
/// hundred guesses at once, on the tunnel port (tokens) and on the public port (visitor passwords and API keys). Each
/// test guesses from a loopback address of its own (127.0.0.x), so the limit of one is not another's.
/// </summary>
public sealed class FailedAttemptLimitTests(FailedAttemptLimitTests.GuardedServer server) : IClassFixture<FailedAttemptLimitTests.GuardedServer>
{
    private const int Limit = 3;
    private const string ApiKey = "guarded-api-key-0123456789";
    private const string AlicePassword = "wonderland";

    /// <summary>From <c>htpasswd -nbB -C 4 alice wonderland</c>.</summary>
    private const string AliceHash = "$2y$04$BTDcgfGww9927df4MuFdlOSVk7rsICxhuU.4Pn/x/AxXuaoGL2yFa";

    private static readonly TimeSpan GuessInterval = TimeSpan.FromMilliseconds(100);

    /// <summary>An edge (such as Caddy carrying uplinks over WebSocket) the server trusts for X-Forwarded-For.</summary>
    private static readonly IPAddress Edge = IPAddress.Parse("127.0.0.250");

    [Fact]
    public async Task A_token_guesser_100_ms_apart_gets_exactly_the_limit_of_401s_then_429_with_Retry_After_even_for_the_right_token()
    {
        IPAddress guesser = IPAddress.Parse("127.0.0.11");
        var answers = new List<string>();
        for (int i = 0; i < 10; i++)
        {
            answers.Add(await LoginAsync(guesser, "wrong-token-" + i));
            await Task.Delay(GuessInterval); // the guesser's pace, not a synchronisation
        }

        Assert.Equal(Limit, answers.Count(a => a.StartsWith("HTTP/1.1 401", StringComparison.Ordinal)));
        Assert.All(answers.Skip(Limit), a => AssertTooMany(a, "too-many-failed-logins"));
        AssertTooMany(await LoginAsync(guesser, TunnelStack.Token), "too-many-failed-logins");
        Assert.StartsWith("HTTP/1.1 101", await LoginAsync(IPAddress.Parse("127.0.0.12"), TunnelStack.Token), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 401", await LoginAsync(IPAddress.Parse("127.0.0.13"), "wrong-token"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_hundred_token_guesses_at_once_from_one_address_get_exactly_the_limit_of_401s()
    {
        IPAddress guesser = IPAddress.Parse("127.0.0.21");
        string[] answers = await Task.WhenAll(Enumerable.Range(0, 100).Select(i => LoginAsync(guesser, "wrong-token-" + i)));

        Assert.Equal(Limit, answers.Count(a => a.StartsWith("HTTP/1.1 401", StringComparison.Ordinal)));
        Assert.Equal(100 - Limit, answers.Count(a => a.StartsWith("HTTP/1.1 429", StringComparison.Ordinal)));
        AssertTooMany(await LoginAsync(guesser, TunnelStack.Token), "too-many-failed-logins");
    }

    [Fact]
    public async Task Behind_a_trusted_edge_each_caller_in_X_Forwarded_For_has_its_own_count_and_the_edge_none()
    {
        var answers = new List<string>();
        for (int i = 0; i < 6; i++)
        {
            answers.Add(await LoginAsync(Edge, "wrong-token-" + i, forwardedFor: "198.51.100.1"));
            await Task.Delay(GuessInterval); // the guesser's pace, not a synchronisation
        }

        Assert.Equal(Limit, answers.Count(a => a.StartsWith("HTTP/1.1 401", StringComparison.Ordinal)));
        Assert.All(answers.Skip(Limit), a => AssertTooMany(a, "too-many-failed-logins"));
        AssertTooMany(await LoginAsync(Edge, TunnelStack.Token, forwardedFor: "198.51.100.1"), "too-many-failed-logins");

        // Another client behind the same edge, and one that claims the guesser's address before the edge's entry.
        Assert.StartsWith("HTTP/1.1 101", await LoginAsync(Edge, TunnelStack.Token, forwardedFor: "198.51.100.2"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 101", await LoginAsync(Edge, TunnelStack.Token, forwardedFor: "198.51.100.1, 198.51.100.3"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_hundred_guesses_at_once_behind_the_edge_get_exactly_the_limit_of_401s_while_twenty_clients_beside_them_log_in()
    {
        Task<string>[] guesses = [.. Enumerable.Range(0, 100).Select(i => LoginAsync(Edge, "wrong-token-" + i, forwardedFor: "198.51.100.60"))];
        Task<string>[] clients = [.. Enumerable.Range(0, 20).Select(i => LoginAsync(Edge, TunnelStack.Token, forwardedFor: "198.51.100." + (100 + i)))];
        string[] guessed = await Task.WhenAll(guesses);
        string[] logins = await Task.WhenAll(clients);

        Assert.Equal(Limit, guessed.Count(a => a.StartsWith("HTTP/1.1 401", StringComparison.Ordinal)));
        Assert.Equal(100 - Limit, guessed.Count(a => a.StartsWith("HTTP/1.1 429", StringComparison.Ordinal)));
        Assert.All(logins, a => Assert.StartsWith("HTTP/1.1 101", a, StringComparison.Ordinal));
    }

    [Fact]
    public async Task X_Forwarded_For_from_an_address_that_is_not_a_trusted_proxy_changes_nothing()
    {
        IPAddress guesser = IPAddress.Parse("127.0.0.51");
        for (int i = 0; i < Limit; i++)
        {
            Assert.StartsWith("HTTP/1.1 401", await LoginAsync(guesser, "wrong-token-" + i, forwardedFor: "198.51.100." + (10 + i)), StringComparison.Ordinal);
        }

        AssertTooMany(await LoginAsync(guesser, TunnelStack.Token, forwardedFor: "198.51.100.99"), "too-many-failed-logins");
    }

    [Theory]
    [InlineData("basic", "127.0.0.31")]
    [InlineData("bearer", "127.0.0.32")]
    [InlineData("x-api-key", "127.0.0.33")]
    public async Task A_visitor_guessing_100_ms_apart_gets_exactly_the_limit_of_401s_then_429_even_with_the_right_credentials(string scheme, string address)
    {
        IPAddress guesser = IPAddress.Parse(address);
        using HttpClient http = CallerHttp.From(guesser);
        var statuses = new List<HttpStatusCode>();
        for (int i = 0; i < 10; i++)
        {
            using HttpResponseMessage guess = await http.SendAsync(Visit(scheme, "wrong-" + i));
            statuses.Add(guess.StatusCode);
            await Task.Delay(GuessInterval);
        }

        Assert.Equal([.. Enumerable.Repeat(HttpStatusCode.Unauthorized, Limit), .. Enumerable.Repeat(HttpStatusCode.TooManyRequests, 10 - Limit)], statuses);
        using HttpResponseMessage right = await http.SendAsync(Visit(scheme, Right(scheme)));
        Assert.Equal(HttpStatusCode.TooManyRequests, right.StatusCode);
        Assert.True(right.Headers.RetryAfter?.Delta >= TimeSpan.FromSeconds(1), "a 429 says when to come back");
        Assert.Contains("urn:tunnel2:problem:too-many-failed-attempts", await right.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        using HttpClient other = CallerHttp.From(IPAddress.Parse(address.Replace("127.0.0.", "127.0.1.", StringComparison.Ordinal)));
        using HttpResponseMessage elsewhere = await other.SendAsync(Visit(scheme, Right(scheme)));
        Assert.Equal(HttpStatusCode.OK, elsewhere.StatusCode);
    }

    [Theory]
    [InlineData("basic", "127.0.0.41")]
    [InlineData("x-api-key", "127.0.0.42")]
    public async Task A_hundred_visitor_guesses_at_once_from_one_address_get_exactly_the_limit_of_401s(string scheme, string address)
    {
        using HttpClient http = CallerHttp.From(IPAddress.Parse(address));
        HttpResponseMessage[] answers = await Task.WhenAll(Enumerable.Range(0, 100).Select(i => http.SendAsync(Visit(scheme, "wrong-" + i))));

        Assert.Equal(Limit, answers.Count(a => a.StatusCode == HttpStatusCode.Unauthorized));
        Assert.Equal(100 - Limit, answers.Count(a => a.StatusCode == HttpStatusCode.TooManyRequests));
        foreach (HttpResponseMessage answer in answers)
        {
            answer.Dispose();
        }
    }

    private static void AssertTooMany(string answer, string reason)
    {
        Assert.StartsWith("HTTP/1.1 429", answer, StringComparison.Ordinal);
        Assert.Matches("Retry-After: [1-9][0-9]*\r\n", answer);
        Assert.Contains("urn:tunnel2:problem:" + reason, answer, StringComparison.Ordinal);
    }

    private static string Right(string scheme) => scheme == "basic" ? AlicePassword : ApiKey;

    private async Task<string> LoginAsync(IPAddress from, string token, string? forwardedFor = null)
    {
        using RawTunnelConnection connection = await RawTunnelConnection.OpenAsync(server.Stack.TunnelUrl, from);
        string forwarded = forwardedFor is null ? string.Empty : $"X-Forwarded-For: {forwardedFor}\r\n";
        return await connection.HandshakeAsync($"Authorization: Bearer {token}\r\n{forwarded}", "guessed-" + from.GetAddressBytes()[3]);
    }

    private HttpRequestMessage Visit(string scheme, string secret)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, server.Stack.SessionUrl("/loadtest/ping"));
        switch (scheme)
        {
            case "basic":
                request.Headers.Authorization = new AuthenticationHeaderValue("Basic", Convert.ToBase64String(Encoding.UTF8.GetBytes("alice:" + secret)));
                break;
            case "bearer":
                request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", secret);
                break;
            default:
                request.Headers.Add(VisitorPolicy.ApiKeyHeader, secret);
                break;
        }

        return request;
    }

    /// <summary>A TunnelServer process with both limits at <see cref="Limit"/> a minute and a guarded session, served by a client process.</summary>
    public sealed class GuardedServer : IAsyncLifetime
    {
        private readonly string _credentials = Path.Combine(Path.GetTempPath(), $"tunnel2-guarded-{Guid.NewGuid():N}.json");

        public ProcessStack Stack { get; private set; } = null!;

        public async ValueTask InitializeAsync()
        {
            await File.WriteAllTextAsync(_credentials, CredentialsJson([], [
                $$"""{ "Sessions": "guarded", "Users": { "alice": "{{AliceHash}}" }, "ApiKeys": [ "{{TokenHash.Create(ApiKey)}}" ] }""",
            ]));
            Stack = await ProcessStack.StartAsync("guarded", new ProcessStackOptions
            {
                ProbeHeaders = new Dictionary<string, string> { ["Authorization"] = "Bearer " + ApiKey },
                ServerArgs =
                [
                    $"--TunnelServer:CredentialsFile={_credentials}",
                    $"--TunnelServer:Limits:MaxFailedLoginsPerMinute={Limit}",
                    $"--ProxyEntry:RateLimits:FailedVisitorLoginsPerMinute={Limit}",
                    "--trusted-proxy", Edge.ToString(),
                ],
            });
        }

        public async ValueTask DisposeAsync()
        {
            await Stack.DisposeAsync();
            File.Delete(_credentials);
        }
    }
}
