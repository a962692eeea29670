using System.Net;
using Microsoft.AspNetCore.Http;
using Microsoft.IdentityModel.Protocols;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.UnitTests.Access;

/// <summary>
/// The JWT bearer rule: Microsoft.IdentityModel's handler and configuration manager over a key set this test makes
/// and serves from memory (the end-to-end test serves it over HTTP).
/// </summary>
public sealed class JwtRuleTests : IDisposable
{
    private const string IssuerUrl = "https://login.example.test/";
    private const string Audience = "api://grafana";

    private readonly JwtIssuer _issuer = new(IssuerUrl);
    private readonly KeySetDocuments _documents;
    private readonly JwtRule _rule;

    public JwtRuleTests()
    {
        _documents = new KeySetDocuments(_issuer);
        _rule = new JwtRule(IssuerUrl, Audience, new Uri("https://login.example.test/jwks"), TimeSpan.FromSeconds(30), TimeSpan.FromHours(12), _documents);
    }

    public void Dispose() => _issuer.Dispose();

    [Fact]
    public async Task A_token_signed_by_the_issuer_for_the_audience_lets_the_visitor_in_and_names_them()
    {
        (VisitorVerdict verdict, VisitorCheck check, _) = await CheckAsync("Bearer " + _issuer.Token(Audience, "alice", "alice@example.com"));

        Assert.Equal(VisitorVerdict.Allowed, verdict);
        Assert.Equal(("alice", "alice@example.com", "Authorization"), (check.User, check.Email, check.CredentialsHeader));
    }

    public static TheoryData<string, string> Refusals => new()
    {
        { "expired", "expired" },
        { "alg-none", "not signed" },
        { "wrong-issuer", "issuer" },
        { "wrong-audience", "audience" },
        { "unpublished-key", "key the issuer does not publish" },
        { "not-a-jwt", "not a JWT" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task A_token_that_is_not_right_gets_401_with_an_invalid_token_challenge_saying_why(string kind, string reason)
    {
        string token = kind switch
        {
            "expired" => _issuer.Token(Audience, lifetime: TimeSpan.FromMinutes(-10)),
            "alg-none" => _issuer.UnsignedToken(Audience),
            "wrong-issuer" => _issuer.Token(Audience, issuer: "https://elsewhere.example.test/"),
            "wrong-audience" => _issuer.Token("api://another-app"),
            "unpublished-key" => _issuer.Token(Audience, unpublishedKey: true),
            _ => "an-api-key-perhaps",
        };

        (VisitorVerdict verdict, VisitorCheck check, VisitorPolicy policy) = await CheckAsync("Bearer " + token);

        Assert.Equal(VisitorVerdict.CredentialsWrong, verdict);
        Assert.Contains(reason, check.Problem, StringComparison.Ordinal);
        string challenge = Assert.Single(policy.Challenges("s", check));
        Assert.StartsWith("Bearer realm=\"s\", error=\"invalid_token\", error_description=\"", challenge, StringComparison.Ordinal);
        Assert.Contains(reason, challenge, StringComparison.Ordinal);
        Assert.Null(check.User);
    }

    [Fact]
    public async Task No_token_gets_a_plain_bearer_challenge()
    {
        (VisitorVerdict verdict, VisitorCheck check, VisitorPolicy policy) = await CheckAsync(authorization: null);

        Assert.Equal(VisitorVerdict.CredentialsMissing, verdict);
        Assert.Equal(["Bearer realm=\"s\""], policy.Challenges("s", check));
    }

    [Fact]
    public async Task A_rotated_key_is_taken_once_the_key_set_publishes_it_without_a_restart()
    {
        Assert.Equal(VisitorVerdict.Allowed, (await CheckAsync("Bearer " + _issuer.Token(Audience))).Verdict);
        int fetches = _documents.Fetches;

        _issuer.AddKey();
        _issuer.DropOldKeys();
        string rotated = _issuer.Token(Audience);

        // A token naming a key the manager does not know makes it fetch the key set again (in the background, as
        // JwtBearer's handler does); from then on the new key is taken. No restart, no new rule.
        Assert.Equal(VisitorVerdict.CredentialsWrong, (await CheckAsync("Bearer " + _issuer.Token(Audience, unpublishedKey: true))).Verdict);
        await Eventually.WaitUntilAsync(async () => (await CheckAsync("Bearer " + rotated)).Verdict == VisitorVerdict.Allowed,
            "the rotated key is taken");
        Assert.True(_documents.Fetches > fetches, "the key set was fetched again");
    }

    [Fact]
    public async Task A_wrong_token_counts_as_a_failed_attempt_of_its_address()
    {
        using var attempts = new Tunnel2.ProxyEntry.Limits.FailedAttempts(perMinute: 2);
        string wrong = "Bearer " + _issuer.Token(Audience, issuer: "https://elsewhere.example.test/");

        VisitorVerdict[] verdicts = [
            (await CheckAsync(wrong, attempts)).Verdict, (await CheckAsync(wrong, attempts)).Verdict,
            (await CheckAsync("Bearer " + _issuer.Token(Audience), attempts)).Verdict];

        Assert.Equal([VisitorVerdict.CredentialsWrong, VisitorVerdict.CredentialsWrong, VisitorVerdict.TooManyAttempts], verdicts);
    }

    [Theory]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Jwt": { "Audience": "x" } } ] }""", "Jwt:Issuer")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Jwt": { "Issuer": "https://i.example/" } } ] }""", "Jwt:Audience")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Jwt": { "Issuer": "https://i.example/", "Audience": "x", "JwksUrl": "http://i.example/jwks" } } ] }""", "https")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Jwt": { "Issuer": "https://i.example/", "Audience": "x", "ClockSkewSeconds": "-1" } } ] }""", "ClockSkewSeconds")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Jwt": { "Issuer": "https://i.example/", "Audience": "x", "RefreshMinutes": "soon" } } ] }""",
        "Visitors[0] (a): Jwt:RefreshMinutes must be a whole number from 1 to 10080, not 'soon'.")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Jwt": { "Issuer": "https://i.example/", "Audience": "x", "JwksUrl": "ftp://i.example/jwks" } } ] }""",
        "Visitors[0] (a): Jwt:JwksUrl must be the URL of the issuer's key set (JWKS).")]
    public void A_wrong_Jwt_entry_is_named_in_the_credentials_file(string json, string expected)
    {
        var error = Assert.Throws<InvalidDataException>(() => Credentials.Parse(new MemoryStream(System.Text.Encoding.UTF8.GetBytes(json))));
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_Jwt_entry_of_the_credentials_file_makes_a_rule_beside_the_others()
    {
        Credentials credentials = Credentials.Parse(new MemoryStream(System.Text.Encoding.UTF8.GetBytes(
            """{ "Visitors": [ { "Sessions": "api-*", "Allow": [ "10.0.0.0/8" ], "Jwt": { "Issuer": "https://i.example/", "Audience": "api://x", "JwksUrl": "http://127.0.0.1:1/jwks" } } ] }""")));

        VisitorPolicy policy = credentials.Visitors.For("api-1")!;
        Assert.Equal(["cidr", "jwt"], policy.Rules.Select(rule => rule.Kind));
        Assert.Equal(("https://i.example/", "api://x"), (policy.Rule<JwtRule>()!.Issuer, policy.Rule<JwtRule>()!.Audience));
    }

    private async Task<(VisitorVerdict Verdict, VisitorCheck Check, VisitorPolicy Policy)> CheckAsync(string? authorization,
        Tunnel2.ProxyEntry.Limits.FailedAttempts? attempts = null)
    {
        Assert.True(SessionPattern.TryParse("*", out SessionPattern? any, out _));
        var policy = new VisitorPolicy(any!, [_rule]);
        var context = new DefaultHttpContext();
        if (authorization is not null)
        {
            context.Request.Headers.Authorization = authorization;
        }

        var check = new VisitorCheck(context, "s", IPAddress.Parse("192.0.2.9"), attempts);
        return (await policy.CheckAsync(check), check, policy);
    }

    /// <summary>The issuer's key set as it is now, counted each time the manager reads it.</summary>
    private sealed class KeySetDocuments(JwtIssuer issuer) : IDocumentRetriever
    {
        private int _fetches;

        public int Fetches => Volatile.Read(ref _fetches);

        public Task<string> GetDocumentAsync(string address, CancellationToken cancel)
        {
            Interlocked.Increment(ref _fetches);
            return Task.FromResult(issuer.Jwks());
        }
    }
}
