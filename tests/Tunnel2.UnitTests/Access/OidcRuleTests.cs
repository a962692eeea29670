using System.Security.Claims;
using System.Text;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.UnitTests.Access;

/// <summary>The OpenID Connect login rule: its entry in the credentials file, its allow lists, and where it cannot go.</summary>
public sealed class OidcRuleTests
{
    private const string Provider = """ "Authority": "https://login.example.com/", "ClientId": "tunnel2", "ClientSecret": "s3cret" """;

    [Fact]
    public void An_Oidc_entry_makes_a_login_rule_that_asks_for_credentials_and_takes_no_TCP_caller()
    {
        VisitorPolicy policy = Parse($$"""{ "Visitors": [ { "Sessions": "lab-*", "Oidc": { {{Provider}}, "AllowedEmailDomains": [ "example.com" ] } } ] }""")
            .Visitors.For("lab-jupyter")!;

        OidcRule rule = policy.Rule<OidcRule>()!;
        Assert.True(policy.HasLogin);
        Assert.True(policy.WantsCredentials);
        Assert.Equal(["openid", "email"], rule.Settings.Scopes);
        Assert.Equal(TimeSpan.FromHours(8), rule.Settings.CookieLifetime);
    }

    [Theory]
    [InlineData("""{ "Sessions": "lab", "Oidc": { "Authority": "http://login.example.com/", "ClientId": "c", "ClientSecret": "s", "AllowedEmails": [ "a@example.com" ] } }""", "https URL")]
    [InlineData("""{ "Sessions": "lab", "Oidc": { "Authority": "https://login.example.com/", "AllowedEmails": [ "a@example.com" ] } }""", "Oidc:ClientId and Oidc:ClientSecret")]
    [InlineData("""{ "Sessions": "lab", "Oidc": { "Authority": "https://login.example.com/", "ClientId": "c", "ClientSecret": "s" } }""", "needs an allow list")]
    [InlineData("""{ "Sessions": "lab", "Oidc": { "Authority": "https://login.example.com/", "ClientId": "c", "ClientSecret": "s", "AllowedClaim": { "Name": "groups" } } }""", "AllowedClaim:Values")]
    [InlineData("""{ "Sessions": "lab", "Oidc": { "Authority": "https://login.example.com/", "ClientId": "c", "ClientSecret": "s", "AllowedEmails": [ "a@example.com" ], "CookieMinutes": "0" } }""", "CookieMinutes")]
    public void A_wrong_Oidc_entry_is_named(string visitor, string expected)
    {
        var error = Assert.Throws<InvalidDataException>(() => Parse($$"""{ "Visitors": [ {{visitor}} ] }"""));
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_login_on_a_session_that_takes_raw_TCP_callers_is_refused_with_a_clear_message()
    {
        var error = Assert.Throws<InvalidDataException>(() => Parse($$"""
            { "TcpPorts": { "lab-db": 15432 },
              "Visitors": [ { "Sessions": "lab-*", "Oidc": { {{Provider}}, "AllowedEmailDomains": [ "example.com" ] } } ] }
            """));

        Assert.Contains("Visitors (lab-*): an Oidc login cannot guard session 'lab-db', which takes raw TCP callers (TcpPorts)", error.Message, StringComparison.Ordinal);
        Assert.Contains("a TCP caller cannot follow a browser login", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_TCP_session_with_rules_of_its_own_beside_a_login_pattern_is_fine()
    {
        Credentials credentials = Parse($$"""
            { "TcpPorts": { "lab-db": 15432 },
              "Visitors": [ { "Sessions": "lab-*", "Oidc": { {{Provider}}, "AllowedEmailDomains": [ "example.com" ] } },
                            { "Sessions": "lab-db", "Allow": [ "10.0.0.0/8" ] } ] }
            """);

        Assert.False(credentials.Visitors.For("lab-db")!.HasLogin);
    }

    [Theory]
    [InlineData("alice@example.com", "true", null, true)]
    [InlineData("alice@EXAMPLE.com", "true", null, true)]
    [InlineData("eve@evil.example", "true", null, false)]
    [InlineData("eve@example.com.evil.example", "true", null, false)]
    [InlineData("alice@example.com", "false", null, false)] // an email the provider has not verified counts for nothing
    [InlineData("bob@partner.example", "true", null, true)] // named one by one
    [InlineData("carol@elsewhere.example", "true", "admins", false)] // the claim alone does not pass the email lists
    public void Every_allow_list_set_must_take_the_account(string email, string verified, string? group, bool expected)
    {
        OidcRule rule = Parse($$"""
            { "Visitors": [ { "Sessions": "lab", "Oidc": { {{Provider}}, "AllowedEmailDomains": [ "example.com" ], "AllowedEmails": [ "bob@partner.example" ] } } ] }
            """).Visitors.For("lab")!.Rule<OidcRule>()!;

        Assert.Equal(expected, rule.Allows(Account(email, verified, group), out string who));
        Assert.Equal(email, who);
    }

    [Fact]
    public void A_claim_list_takes_only_accounts_with_one_of_its_values()
    {
        OidcRule rule = Parse($$"""
            { "Visitors": [ { "Sessions": "lab", "Oidc": { {{Provider}}, "AllowedClaim": { "Name": "groups", "Values": [ "admins" ], "Scope": "groups" } } } ] }
            """).Visitors.For("lab")!.Rule<OidcRule>()!;

        Assert.True(rule.Allows(Account("x@anywhere.example", "true", "admins"), out _));
        Assert.False(rule.Allows(Account("x@anywhere.example", "true", "staff"), out _));
        Assert.Contains("groups", rule.Settings.Scopes);
    }

    [Theory]
    [InlineData("/session/lab/tree?x=1", "/session/lab/tree?x=1")]
    [InlineData("/", "/")]
    [InlineData("//evil.example/x", "/")]
    [InlineData("/\\evil.example/x", "/")]
    [InlineData("https://evil.example/", "/")]
    [InlineData(null, "/")]
    public void A_finished_login_goes_back_to_a_path_on_this_host_only(string? back, string expected) =>
        Assert.Equal(expected, OidcCallback.LocalPath(back));

    [Theory]
    [InlineData("alice@example.com", "alice@example.com")]
    [InlineData("alice\r\nX-Admin: yes", null)]
    [InlineData("", null)]
    public void An_identity_that_could_not_stand_in_a_header_line_is_dropped(string name, string? expected)
    {
        var check = new VisitorCheck(new Microsoft.AspNetCore.Http.DefaultHttpContext(), "s", remote: null, attempts: null)
        {
            User = name,
            Email = name,
        };

        Assert.Equal((expected, expected), (check.User, check.Email));
    }

    private static ClaimsPrincipal Account(string email, string verified, string? group)
    {
        var claims = new List<Claim> { new("sub", email), new("email", email), new("email_verified", verified) };
        if (group is not null)
        {
            claims.Add(new Claim("groups", group));
        }

        return new ClaimsPrincipal(new ClaimsIdentity(claims, "oidc"));
    }

    private static Credentials Parse(string json) => Credentials.Parse(new MemoryStream(Encoding.UTF8.GetBytes(json)));
}
