using System.Text;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.UnitTests.Access;

/// <summary>The credentials file: what it holds, what it refuses, and the token checks built on it.</summary>
public sealed class CredentialsTests
{
    private const string TeamAToken = "team-a-token-0123456789";

    /// <summary>From <c>htpasswd -nbB -C 4 alice wonderland</c>: an Apache bcrypt entry works as it is.</summary>
    public const string AliceHtpasswd = "$2y$04$BTDcgfGww9927df4MuFdlOSVk7rsICxhuU.4Pn/x/AxXuaoGL2yFa";

    public static string File(string clients = "", string visitors = "") =>
        $$"""{ "Clients": [ {{clients}} ], "Visitors": [ {{visitors}} ] }""";

    public static string Client(string name, string token, params string[] sessions) =>
        $$"""{ "Name": "{{name}}", "TokenHash": "{{TokenHash.Create(token)}}", "Sessions": [ {{string.Join(", ", sessions.Select(s => $"\"{s}\""))}} ] }""";

    [Fact]
    public void A_file_with_clients_and_visitor_policies_parses_into_both()
    {
        Credentials credentials = Parse(File(
            Client("team-a", TeamAToken, "team-a-*", "demo"),
            $$"""{ "Sessions": "team-a-*", "Users": { "alice": "{{AliceHtpasswd}}" }, "ApiKeys": [ "{{TokenHash.Create("key-0123456789abcdef")}}" ], "Allow": [ "10.0.0.0/8", "2001:db8::/32", "192.0.2.7" ], "Deny": [ "10.9.9.9/32" ] }"""));

        ClientCredential client = Assert.Single(credentials.Clients);
        Assert.Equal("team-a", client.Name);
        Assert.True(client.MayServe("team-a-web"));
        Assert.True(client.MayServe("demo"));
        Assert.False(client.MayServe("team-b-web"));
        VisitorPolicy policy = credentials.Visitors.For("team-a-web")!;
        Assert.True(policy.Rule<BasicAuthRule>()!.Users["alice"].Verify("alice", "wonderland"));
        Assert.False(policy.Rule<BasicAuthRule>()!.Users["alice"].Verify("alice", "Wonderland"));
        Assert.Single(policy.Rule<ApiKeyRule>()!.Keys);
        Assert.Equal(3, policy.Rule<AddressRule>()!.Allow.Count);
        Assert.Single(policy.Rule<AddressRule>()!.Deny);
        Assert.Null(credentials.Visitors.For("demo"));
    }

    [Theory]
    [InlineData("""{ "Clients": [ { "Name": "x", "TokenHash": "plain-token", "Sessions": [ "a" ] } ] }""", "TokenHash must be 'sha256:'")]
    [InlineData("""{ "Clients": [ { "TokenHash": "sha256:00", "Sessions": [ "a" ] } ] }""", "Name is missing")]
    [InlineData("""{ "Clients": [ { "Name": "x", "TokenHash": "sha256:0000000000000000000000000000000000000000000000000000000000000000", "Sessions": [ ] } ] }""", "at least one session")]
    [InlineData("""{ "Clients": [ { "Name": "x", "TokenHash": "sha256:0000000000000000000000000000000000000000000000000000000000000000", "Sessions": [ "a/b" ] } ] }""", "not a session pattern")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Users": { "alice": "wonderland" } } ] }""", "bcrypt hash")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Allow": [ "10.0.0.0/33" ] } ] }""", "CIDR")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a", "Users": { "alice": "$2y$31$BTDcgfGww9927df4MuFdlOSVk7rsICxhuU.4Pn/x/AxXuaoGL2yFa" } } ] }""", "cost 04 to 12")]
    [InlineData("""{ "Visitors": [ { "Sessions": "a" }, { "Sessions": "a" } ] }""", "same Sessions")]
    [InlineData("""{ "Clients": [ """, "not valid JSON")]
    public void Every_mistake_is_named_with_where_it_is(string json, string expected)
    {
        var error = Assert.Throws<InvalidDataException>(() => Parse(json));
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_token_is_found_by_its_hash_and_the_shared_token_may_serve_any_session()
    {
        string path = Path.Combine(Path.GetTempPath(), $"credentials-{Guid.NewGuid():N}.json");
        System.IO.File.WriteAllText(path, File(Client("team-a", TeamAToken, "team-a-*")));
        try
        {
            using var file = new CredentialsFile(path, new Tunnel2.ProxyEntry.Sessions.SessionPolicies(),
                Microsoft.Extensions.Logging.Abstractions.NullLogger<CredentialsFile>.Instance);
            var authenticator = new ClientAuthenticator("shared-dev-token", file);

            Assert.Equal("team-a", authenticator.Authenticate(TeamAToken)?.Name);
            Assert.Null(authenticator.Authenticate(TeamAToken + "x"));
            Assert.Null(authenticator.Authenticate(string.Empty));
            Assert.Equal(ClientAuthenticator.SharedTokenName, authenticator.Authenticate("shared-dev-token")?.Name);
            Assert.True(authenticator.Authenticate("shared-dev-token")!.MayServe("anything"));
            Assert.Null(new ClientAuthenticator(null, file).Authenticate("shared-dev-token"));
        }
        finally
        {
            System.IO.File.Delete(path);
        }
    }

    [Fact]
    public void The_constant_time_search_finds_the_match_whichever_position_it_holds()
    {
        byte[][] stored = [TokenHash.Of("one-0123456789abcdef"), TokenHash.Of("two-0123456789abcdef"), TokenHash.Of("three-0123456789abcd")];

        Assert.Equal(0, TokenHash.IndexOf(TokenHash.Of("one-0123456789abcdef"), stored));
        Assert.Equal(2, TokenHash.IndexOf(TokenHash.Of("three-0123456789abcd"), stored));
        Assert.Equal(-1, TokenHash.IndexOf(TokenHash.Of("four-0123456789abcde"), stored));
        Assert.Matches("^sha256:[0-9a-f]{64}$", TokenHash.Create("x"));
    }

    private static Credentials Parse(string json) => Credentials.Parse(new MemoryStream(Encoding.UTF8.GetBytes(json)));
}
