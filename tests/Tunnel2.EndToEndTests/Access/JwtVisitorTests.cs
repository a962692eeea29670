using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using static Tunnel2.EndToEndTests.Access.CredentialsFileTests;

namespace Tunnel2.EndToEndTests.Access;

/// <summary>
/// A session that takes API callers with a JWT, as deployed: TunnelServer and TunnelClient processes, a credentials
/// file naming the issuer, the audience and the key set (JWKS), which this test serves from loopback and signs tokens
/// for with keys of its own.
/// </summary>
public sealed class JwtVisitorTests : IAsyncLifetime
{
    private const string Audience = "api://team-a-grafana";

    private readonly string _path = Path.Combine(Path.GetTempPath(), $"tunnel2-jwt-{Guid.NewGuid():N}.json");
    private readonly string _session = "jwt-" + Guid.NewGuid().ToString("N")[..8];
    private readonly HttpClient _http = CallerHttp.Create();
    private JwtIssuer? _issuer;
    private WebApplication? _keys;
    private int _keyFetches;
    private ProcessStack? _stack;

    public async ValueTask InitializeAsync()
    {
        _keys = WebApplication.CreateSlimBuilder().Build();
        _keys.Urls.Add("http://127.0.0.1:0");
        _keys.MapGet("/jwks", () =>
        {
            Interlocked.Increment(ref _keyFetches);
            return Results.Text(_issuer!.Jwks(), "application/json");
        });
        await _keys.StartAsync();
        string keysUrl = _keys.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        _issuer = new JwtIssuer(keysUrl + "/");
        await File.WriteAllTextAsync(_path, CredentialsJson([], [
            $$"""{ "Sessions": "{{_session}}", "Jwt": { "Issuer": "{{_issuer.Issuer}}", "Audience": "{{Audience}}", "JwksUrl": "{{keysUrl}}/jwks" } }""",
        ]));
        _stack = await ProcessStack.StartAsync(_session, new ProcessStackOptions
        {
            ServerArgs = [$"--TunnelServer:CredentialsFile={_path}", "--ProxyEntry:RateLimits:FailedVisitorLoginsPerMinute=1000"],
            ProbeHeaders = new Dictionary<string, string> { ["Authorization"] = "Bearer " + _issuer.Token(Audience, lifetime: TimeSpan.FromHours(1)) },
        });
    }

    public async ValueTask DisposeAsync()
    {
        _http.Dispose();
        if (_stack is not null)
        {
            await _stack.DisposeAsync();
        }

        if (_keys is not null)
        {
            await _keys.DisposeAsync();
        }

        _issuer?.Dispose();
        File.Delete(_path);
    }

    [Fact]
    public async Task A_valid_token_reaches_the_backend_as_its_identity_and_a_forged_identity_header_is_removed()
    {
        using HttpRequestMessage request = Get(_issuer!.Token(Audience, "alice", "alice@example.com"));
        request.Headers.Add("X-Forwarded-User", "mallory");
        request.Headers.Add("X-Forwarded-Email", "mallory@example.com");

        using HttpResponseMessage answer = await _http.SendAsync(request);

        Dictionary<string, string> headers = await BackendSaw.HeadersAsync(answer);
        Assert.Equal(("alice", "alice@example.com"), (headers["X-Forwarded-User"], headers["X-Forwarded-Email"]));
        Assert.False(headers.ContainsKey("Authorization"), "the tunnel's credentials stay with the tunnel");
    }

    [Theory]
    [InlineData("none", "This session needs a JWT")]
    [InlineData("expired", "The token expired at")]
    [InlineData("alg-none", "The token is not signed")]
    [InlineData("wrong-issuer", "The token's issuer is not the one this session trusts")]
    [InlineData("wrong-audience", "The token's audience is not this session's")]
    public async Task A_token_that_is_not_right_gets_401_with_WWW_Authenticate_saying_why(string kind, string detail)
    {
        string? token = kind switch
        {
            "expired" => _issuer!.Token(Audience, lifetime: TimeSpan.FromMinutes(-10)),
            "alg-none" => _issuer!.UnsignedToken(Audience),
            "wrong-issuer" => _issuer!.Token(Audience, issuer: "https://login.elsewhere.example/"),
            "wrong-audience" => _issuer!.Token("api://another-app"),
            _ => null,
        };

        using HttpResponseMessage answer = await _http.SendAsync(Get(token));

        Assert.Equal(HttpStatusCode.Unauthorized, answer.StatusCode);
        AuthenticationHeaderValue challenge = Assert.Single(answer.Headers.WwwAuthenticate);
        Assert.Equal("Bearer", challenge.Scheme);
        Assert.Equal(token is null, !challenge.Parameter!.Contains("error=\"invalid_token\"", StringComparison.Ordinal));
        using JsonDocument problem = JsonDocument.Parse(await answer.Content.ReadAsStringAsync());
        Assert.Equal("urn:tunnel2:problem:visitor-unauthorized", problem.RootElement.GetProperty("type").GetString());
        Assert.StartsWith(detail, problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
        if (token is not null)
        {
            // The operator reads why in one line, with what to do, and never the token itself.
            Match logged = await _stack!.Server.WaitForOutputAsync(new Regex(@"its bearer JWT was not accepted \((?<reason>[a-z-]+)\): (?<detail>[^\n]*) To fix: \S"));
            Assert.Equal(kind, logged.Groups["reason"].Value);
            Assert.StartsWith(detail, logged.Groups["detail"].Value, StringComparison.Ordinal);
            Assert.DoesNotContain(token, _stack.Server.Output, StringComparison.Ordinal);

            // One refusal, one line: the generic "refused (credentials-wrong)" does not follow the rule's own. A request
            // with no token logs its own line after it, so once that one is read, a second line would have been too.
            using HttpResponseMessage bare = await _http.SendAsync(Get(null));
            await _stack.Server.WaitForOutputAsync(new Regex(@"refused \(credentials-missing\)"));
            Assert.DoesNotContain("refused (credentials-wrong)", _stack.Server.Output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task The_issuer_rotating_its_keys_is_followed_without_a_restart()
    {
        using HttpResponseMessage before = await _http.SendAsync(Get(_issuer!.Token(Audience)));
        Assert.Equal(HttpStatusCode.OK, before.StatusCode);
        int fetches = Volatile.Read(ref _keyFetches);

        _issuer.AddKey();
        _issuer.DropOldKeys();
        string rotated = _issuer.Token(Audience);

        // The first token naming the new key sets off a fetch of the key set (in the background, as JwtBearer's handler
        // does); it is taken from then on, with no restart of either process.
        await Eventually.WaitUntilAsync(async () =>
        {
            using HttpResponseMessage answer = await _http.SendAsync(Get(rotated));
            return answer.StatusCode == HttpStatusCode.OK;
        }, "a token signed with the rotated key is taken");
        using HttpResponseMessage old = await _http.SendAsync(Get(_issuer.Token(Audience, unpublishedKey: true)));
        Assert.Equal(HttpStatusCode.Unauthorized, old.StatusCode);
        Assert.True(Volatile.Read(ref _keyFetches) > fetches, "the key set was fetched again for the new key");
    }

    private HttpRequestMessage Get(string? token)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, _stack!.SessionUrl("/loadtest/get"));
        if (token is not null)
        {
            request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", token);
        }

        return request;
    }
}
