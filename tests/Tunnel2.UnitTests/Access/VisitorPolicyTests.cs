using System.Net;
using System.Text;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Limits;

namespace Tunnel2.UnitTests.Access;

public sealed class VisitorPolicyTests
{
    private const string ApiKey = "visitor-key-0123456789";

    [Theory]
    [InlineData("10.1.2.3", VisitorVerdict.Allowed)]
    [InlineData("10.9.9.9", VisitorVerdict.AddressDenied)]
    [InlineData("192.0.2.1", VisitorVerdict.AddressDenied)]
    [InlineData("::ffff:10.1.2.3", VisitorVerdict.Allowed)]
    [InlineData("2001:db8::1", VisitorVerdict.Allowed)]
    [InlineData("2001:db9::1", VisitorVerdict.AddressDenied)]
    public async Task The_deny_list_comes_first_then_the_allow_list(string address, VisitorVerdict expected)
    {
        VisitorPolicy policy = Policy(allow: ["10.0.0.0/8", "2001:db8::/32"], deny: ["10.9.9.0/24"]);

        Assert.Equal(expected, await CheckAsync(policy, new DefaultHttpContext().Request, IPAddress.Parse(address), attempts: null));
    }

    [Fact]
    public async Task A_deny_list_alone_lets_everyone_else_in()
    {
        VisitorPolicy policy = Policy(deny: ["127.0.0.0/8"]);

        Assert.Equal(VisitorVerdict.AddressDenied, await CheckAsync(policy, new DefaultHttpContext().Request, IPAddress.Loopback, attempts: null));
        Assert.Equal(VisitorVerdict.Allowed, await CheckAsync(policy, new DefaultHttpContext().Request, IPAddress.Parse("192.0.2.1"), attempts: null));
    }

    [Theory]
    [InlineData(null, null, VisitorVerdict.CredentialsMissing)]
    [InlineData("Basic alice:wonderland", null, VisitorVerdict.Allowed)]
    [InlineData("Basic alice:wrong", null, VisitorVerdict.CredentialsWrong)]
    [InlineData("Basic bob:wonderland", null, VisitorVerdict.CredentialsWrong)]
    [InlineData("Basic !!not-base64", null, VisitorVerdict.CredentialsWrong)]
    [InlineData("Bearer " + ApiKey, null, VisitorVerdict.Allowed)]
    [InlineData("Bearer wrong-key", null, VisitorVerdict.CredentialsWrong)]
    [InlineData(null, ApiKey, VisitorVerdict.Allowed)]
    [InlineData(null, "wrong-key", VisitorVerdict.CredentialsWrong)]
    [InlineData("Digest whatever", null, VisitorVerdict.CredentialsWrong)]
    public async Task Basic_auth_or_an_API_key_lets_a_visitor_in(string? authorization, string? apiKey, VisitorVerdict expected)
    {
        VisitorPolicy policy = Policy(users: true, keys: true);
        HttpRequest request = new DefaultHttpContext().Request;
        if (authorization is not null)
        {
            request.Headers.Authorization = authorization.StartsWith("Basic ", StringComparison.Ordinal) && authorization.Contains(':', StringComparison.Ordinal)
                ? "Basic " + Convert.ToBase64String(Encoding.UTF8.GetBytes(authorization[6..]))
                : authorization;
        }

        if (apiKey is not null)
        {
            request.Headers[VisitorPolicy.ApiKeyHeader] = apiKey;
        }

        var used = new List<string?>();
        Assert.Equal(expected, await CheckAsync(policy, request, IPAddress.Loopback, attempts: null, used));
        if (expected == VisitorVerdict.Allowed)
        {
            // The header that carried the tunnel's credentials is named, for the caller to take off before forwarding.
            Assert.Equal(apiKey is not null ? VisitorPolicy.ApiKeyHeader : "Authorization", Assert.Single(used));
        }
    }

    [Fact]
    public async Task A_password_not_verified_before_takes_its_count_before_bcrypt_runs_and_a_remembered_one_takes_none()
    {
        VisitorPolicy policy = Policy(users: true);
        using var attempts = new FailedAttempts(perMinute: 3);
        IPAddress guesser = IPAddress.Parse("192.0.2.66");
        Task<VisitorVerdict> Try(string pair)
        {
            HttpRequest request = new DefaultHttpContext().Request;
            request.Headers.Authorization = "Basic " + Convert.ToBase64String(Encoding.UTF8.GetBytes(pair));
            return CheckAsync(policy, request, guesser, attempts);
        }

        Assert.Equal(VisitorVerdict.Allowed, await Try("alice:wonderland")); // its count was taken for bcrypt and given back
        Assert.Equal(VisitorVerdict.CredentialsWrong, await Try("alice:guess-1"));
        Assert.Equal(VisitorVerdict.CredentialsWrong, await Try("nobody:guess-2")); // an unknown user costs the same count
        Assert.Equal(VisitorVerdict.Allowed, await Try("alice:wonderland")); // remembered: no bcrypt, no count
        Assert.Equal(VisitorVerdict.CredentialsWrong, await Try("alice:guess-3"));
        Assert.Equal(VisitorVerdict.TooManyAttempts, await Try("alice:guess-4"));
        Assert.Equal(VisitorVerdict.TooManyAttempts, await Try("alice:wonderland")); // blocked: right or not, remembered or not
    }

    [Fact]
    public async Task A_rule_kind_of_its_own_joins_the_list_beside_the_others()
    {
        Assert.True(SessionPattern.TryParse("*", out SessionPattern? any, out _));
        var policy = new VisitorPolicy(any!, [new AddressRule([], [IPNetwork.Parse("10.9.0.0/16")]), new PassRule(), new ApiKeyRule([TokenHash.Of(ApiKey)])]);
        HttpRequest pass = new DefaultHttpContext().Request;
        pass.Headers["X-Pass"] = "open-sesame";
        HttpRequest key = new DefaultHttpContext().Request;
        key.Headers[VisitorPolicy.ApiKeyHeader] = ApiKey;

        Assert.Equal(VisitorVerdict.Allowed, await CheckAsync(policy, pass, IPAddress.Loopback, attempts: null));
        Assert.Equal(VisitorVerdict.Allowed, await CheckAsync(policy, key, IPAddress.Loopback, attempts: null));
        Assert.Equal(VisitorVerdict.AddressDenied, await CheckAsync(policy, pass, IPAddress.Parse("10.9.1.1"), attempts: null));
        Assert.Equal(VisitorVerdict.CredentialsMissing, await CheckAsync(policy, new DefaultHttpContext().Request, IPAddress.Loopback, attempts: null));
        Assert.Equal(["Pass", "Bearer"], policy.Challenges("s"));
        Assert.Equal("This session needs the pass or an API key (Authorization: Bearer <key>, or X-Api-Key: <key>).", policy.Needs());
    }

    [Fact]
    public void The_challenges_name_what_the_session_takes()
    {
        Assert.Equal(["Basic realm=\"s\", charset=\"UTF-8\"", "Bearer"], Policy(users: true, keys: true).Challenges("s"));
        Assert.Equal(["Bearer"], Policy(keys: true).Challenges("s"));
    }

    private static VisitorPolicy Policy(string[]? allow = null, string[]? deny = null, bool users = false, bool keys = false)
    {
        Assert.True(SessionPattern.TryParse("*", out SessionPattern? any, out _));
        var userTable = new Dictionary<string, PasswordHash>(StringComparer.Ordinal);
        if (users)
        {
            Assert.True(PasswordHash.TryParse(CredentialsTests.AliceHtpasswd, out PasswordHash? alice));
            userTable["alice"] = alice!;
        }

        var rules = new List<IVisitorRule>();
        if (allow is not null || deny is not null)
        {
            rules.Add(new AddressRule([.. (allow ?? []).Select(IPNetwork.Parse)], [.. (deny ?? []).Select(IPNetwork.Parse)]));
        }

        if (users)
        {
            rules.Add(new BasicAuthRule(userTable));
        }

        if (keys)
        {
            rules.Add(new ApiKeyRule([TokenHash.Of(ApiKey)]));
        }

        return new VisitorPolicy(any!, rules);
    }

    /// <summary>A rule kind made here: the visitor names a pass in a header of its own.</summary>
    private sealed class PassRule : IVisitorRule
    {
        public string Kind => "pass";

        public bool WantsCredentials => true;

        public string Asks => "the pass";

        public string Challenge(string session, VisitorCheck? check) => "Pass";

        public ValueTask<CredentialOutcome> CheckAsync(VisitorCheck check) => ValueTask.FromResult(
            check.Request.Headers["X-Pass"].Count == 0 ? CredentialOutcome.Absent
            : check.Request.Headers["X-Pass"] == "open-sesame" ? CredentialOutcome.Accepted : CredentialOutcome.Wrong);
    }

    /// <summary>One request's check, as <see cref="VisitorAccess"/> makes it.</summary>
    private static async Task<VisitorVerdict> CheckAsync(VisitorPolicy policy, HttpRequest request, IPAddress remote, FailedAttempts? attempts, List<string?>? credentialsHeader = null)
    {
        var check = new VisitorCheck(request.HttpContext, "s", remote, attempts);
        VisitorVerdict verdict = await policy.CheckAsync(check);
        credentialsHeader?.Add(check.CredentialsHeader);
        return verdict;
    }
}
