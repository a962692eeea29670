using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Edge;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.UnitTests.Edge;

public sealed class CertificateAskTests
{
    private const string Suffix = "tunnel.example.com";
    private static readonly Dictionary<string, string> Hosts = new() { ["app.example.org"] = "demo" };

    private static CertificateAsk WithSharedToken() => new(Suffix, Hosts, sharedToken: true, () => []);

    private static CertificateAsk WithClients(params string[] patterns)
    {
        var sessions = new List<SessionPattern>();
        foreach (string text in patterns)
        {
            Assert.True(SessionPattern.TryParse(text, out SessionPattern? pattern, out _));
            sessions.Add(pattern!);
        }

        ClientCredential[] clients = [new("team", new byte[32], sessions)];
        return new CertificateAsk(Suffix, Hosts, sharedToken: false, () => clients);
    }

    [Theory]
    [InlineData("app.example.org")]
    [InlineData("APP.Example.org")]
    [InlineData("app.example.org.")]
    public void A_custom_domain_is_yes_whoever_may_serve_its_session(string domain)
    {
        Assert.Equal(CertificateAskAnswer.CustomDomain, WithClients("other-*").Decide(domain));
    }

    [Theory]
    [InlineData("demo.tunnel.example.com")]
    [InlineData("anything-at-all.tunnel.example.com")]
    [InlineData("a.b.tunnel.example.com")]
    public void With_the_single_token_any_session_name_under_the_suffix_is_yes(string domain)
    {
        Assert.Equal(CertificateAskAnswer.SessionHost, WithSharedToken().Decide(domain));
    }

    [Theory]
    [InlineData("team-a-web.tunnel.example.com", CertificateAskAnswer.SessionHost)]
    [InlineData("fixed.tunnel.example.com", CertificateAskAnswer.SessionHost)]
    [InlineData("team-b-web.tunnel.example.com", CertificateAskAnswer.NoClientMayServe)]
    [InlineData("fixed2.tunnel.example.com", CertificateAskAnswer.NoClientMayServe)]
    [InlineData("Team-a-web.tunnel.example.com", CertificateAskAnswer.NoClientMayServe)] // session ids compare with case, as routing does
    public void With_a_credentials_file_only_sessions_some_client_may_serve_are_yes(string domain, CertificateAskAnswer expected)
    {
        Assert.Equal(expected, WithClients("team-a-*", "fixed").Decide(domain));
    }

    [Fact]
    public void The_clients_are_read_on_every_ask_so_a_reloaded_file_counts_at_once()
    {
        IReadOnlyList<ClientCredential> clients = [];
        var ask = new CertificateAsk(Suffix, Hosts, sharedToken: false, () => clients);
        Assert.Equal(CertificateAskAnswer.NoClientMayServe, ask.Decide("late.tunnel.example.com"));

        Assert.True(SessionPattern.TryParse("late", out SessionPattern? late, out _));
        clients = [new ClientCredential("late", new byte[32], [late!])];

        Assert.Equal(CertificateAskAnswer.SessionHost, ask.Decide("late.tunnel.example.com"));
    }

    [Theory]
    [InlineData("example.com", CertificateAskAnswer.NotRouted)]
    [InlineData("tunnel.example.com", CertificateAskAnswer.NotRouted)] // the suffix itself names no session
    [InlineData("demotunnel.example.com", CertificateAskAnswer.NotRouted)]
    [InlineData("other.example.org", CertificateAskAnswer.NotRouted)]
    [InlineData("127.0.0.1", CertificateAskAnswer.NotAHostName)]
    [InlineData("::1", CertificateAskAnswer.NotAHostName)]
    [InlineData("demo.tunnel.example.com:443", CertificateAskAnswer.NotAHostName)]
    [InlineData("under_score.tunnel.example.com", CertificateAskAnswer.NotAHostName)] // a session id, but no CA names it
    [InlineData("", CertificateAskAnswer.NotAHostName)]
    [InlineData(null, CertificateAskAnswer.NotAHostName)]
    public void Every_other_name_is_no_with_its_reason(string? domain, CertificateAskAnswer expected)
    {
        Assert.Equal(expected, WithSharedToken().Decide(domain));
    }

    [Fact]
    public void A_label_too_long_for_a_session_id_is_not_a_session_name()
    {
        string label = new('a', 60);
        string domain = $"{label}.{label}.{label}.tunnel.example.com"; // a valid host name; 182 characters before the suffix

        Assert.Equal(CertificateAskAnswer.NotASessionName, WithSharedToken().Decide(domain));
    }

    [Fact]
    public void Without_a_suffix_only_custom_domains_are_yes()
    {
        var ask = new CertificateAsk(null, Hosts, sharedToken: true, () => []);

        Assert.Equal(CertificateAskAnswer.CustomDomain, ask.Decide("app.example.org"));
        Assert.Equal(CertificateAskAnswer.NotRouted, ask.Decide("demo.tunnel.example.com"));
    }
}
