using System.Net;
using System.Text;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Access;

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
    public void The_deny_list_comes_first_then_the_allow_list(string address, VisitorVerdict expected)
    {
        VisitorPolicy policy = Policy(allow: ["10.0.0.0/8", "2001:db8::/32"], deny: ["10.9.9.0/24"]);

        Assert.Equal(expected, policy.Check(new DefaultHttpContext().Request, IPAddress.Parse(address), out _));
    }

    [Fact]
    public void A_deny_list_alone_lets_everyone_else_in()
    {
        VisitorPolicy policy = Policy(deny: ["127.0.0.0/8"]);

        Assert.Equal(VisitorVerdict.AddressDenied, policy.Check(new DefaultHttpContext().Request, IPAddress.Loopback, out _));
        Assert.Equal(VisitorVerdict.Allowed, policy.Check(new DefaultHttpContext().Request, IPAddress.Parse("192.0.2.1"), out _));
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
    public void Basic_auth_or_an_API_key_lets_a_visitor_in(string? authorization, string? apiKey, VisitorVerdict expected)
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

        Assert.Equal(expected, policy.Check(request, IPAddress.Loopback, out string? used));
        if (expected == VisitorVerdict.Allowed)
        {
            // The header that carried the tunnel's credentials is named, for the caller to take off before forwarding.
            Assert.Equal(apiKey is not null ? VisitorPolicy.ApiKeyHeader : "Authorization", used);
        }
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

        return new VisitorPolicy(any!, userTable, keys ? [TokenHash.Of(ApiKey)] : [],
            [.. (allow ?? []).Select(IPNetwork.Parse)], [.. (deny ?? []).Select(IPNetwork.Parse)]);
    }
}
