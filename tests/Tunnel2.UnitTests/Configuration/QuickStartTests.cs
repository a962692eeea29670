using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.UnitTests.Configuration;

/// <summary>The client's short form (<c>tunnel2 http 8080</c>) and the public URL the server tells a client.</summary>
public sealed class QuickStartTests
{
    [Theory]
    [InlineData("8080", "http://127.0.0.1:8080")]
    [InlineData("localhost:3000", "http://localhost:3000")]
    [InlineData("https://app.internal:8443", "https://app.internal:8443")]
    public void The_target_becomes_the_backend_URL(string target, string backend)
    {
        string[] expanded = QuickStart.Expand(["http", target, "--token", "t", "--session", "mine"], sessionFromEnvironment: false);

        Assert.Equal(["--backend", backend, "--token", "t", "--session", "mine"], expanded);
    }

    [Theory]
    [InlineData("5432")]
    [InlineData("db.internal:5432")]
    public void The_tcp_form_passes_its_target_to_tcp_and_names_no_backend(string target)
    {
        string[] expanded = QuickStart.Expand(["tcp", target, "--token", "t"], sessionFromEnvironment: false);

        Assert.Equal(["--tcp", target, "--token", "t", "--session"], expanded[..5]);
        Assert.DoesNotContain("--backend", expanded);
    }

    [Fact]
    public void Without_a_session_one_is_made_up_and_each_run_gets_its_own()
    {
        string[] first = QuickStart.Expand(["http", "8080"], sessionFromEnvironment: false);
        string[] second = QuickStart.Expand(["http", "8080"], sessionFromEnvironment: false);

        Assert.Equal(["--backend", "http://127.0.0.1:8080", "--session"], first[..3]);
        Assert.Matches("^[a-z0-9]{10}$", first[3]);
        Assert.NotEqual(first[3], second[3]);
        Assert.Equal(2, QuickStart.Expand(["http", "8080"], sessionFromEnvironment: true).Length); // the environment names it
    }

    [Fact]
    public void Other_command_lines_are_left_as_they_are_and_a_missing_target_is_left_for_the_checks()
    {
        string[] plain = ["--backend", "http://127.0.0.1:1", "--session", "s"];
        Assert.Same(plain, QuickStart.Expand(plain, sessionFromEnvironment: false));
        Assert.Equal(["--backend", "--token", "t", "--session"], QuickStart.Expand(["http", "--token", "t"], sessionFromEnvironment: false)[..4]);
    }

    [Theory]
    [InlineData("http://127.0.0.1:12000/", null, "127.0.0.1:12001", "http://127.0.0.1:12000/session/demo/")]
    [InlineData("http://0.0.0.0:12000/", null, "tunnel.example.com:12001", "http://tunnel.example.com:12000/session/demo/")]
    [InlineData("https://[::]:443/", null, "[2001:db8::1]:12001", "https://[2001:db8::1]/session/demo/")]
    [InlineData("http://0.0.0.0:80/", "tunnel.example.com", "tunnel.example.com", "http://demo.tunnel.example.com/")]
    [InlineData("http://0.0.0.0:12000/", null, null, "http://0.0.0.0:12000/session/demo/")]
    public void The_public_URL_names_a_host_a_caller_can_use(string listener, string? hostSuffix, string? dialled, string expected)
    {
        Assert.Equal(expected, PublicSessionUrl.For("demo", new Uri(listener), hostSuffix, dialled));
    }

    [Theory]
    [InlineData("http://127.0.0.1:12000/", null, "http://app.example.org:12000/")]
    [InlineData("https://0.0.0.0:443/", "tunnel.example.com", "https://app.example.org/")]
    public void A_session_with_hosts_of_its_own_is_told_the_first_of_them(string listener, string? hostSuffix, string expected)
    {
        Assert.Equal(expected, PublicSessionUrl.For("demo", new Uri(listener), hostSuffix, "tunnel.example.com", ownHost: "app.example.org."));
    }
}
