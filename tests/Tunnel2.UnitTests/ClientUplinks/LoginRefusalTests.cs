using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.UnitTests.ClientUplinks;

/// <summary>A refused login told from its problem type: what happened, the server's detail as a sentence, what to do; never the JSON.</summary>
public sealed class LoginRefusalTests
{
    [Theory]
    [InlineData(401, "bad-token", "This server knows no such token.",
        "The server refused the token (401). This server knows no such token. Check --token (or TunnelClient__Token).")]
    [InlineData(403, "session-not-allowed", "This token may not serve session 'b'.",
        "The server refused the session for this token. This token may not serve session 'b'. Use a session this token may serve (its Sessions in the server's credentials file), or the token of that session.")]
    [InlineData(403, "tcp-off", "This server gives session 'db' no TCP port.",
        "The server has no TCP ports. This server gives session 'db' no TCP port. Start the server with --tcp-ports (e.g. --tcp-ports 20000-20099), or run this client without --tcp.")]
    [InlineData(400, "bad-version", "This server speaks Tunnel2-Version 9; the client offered '5'.",
        "The server speaks another version of the Tunnel2 protocol. This server speaks Tunnel2-Version 9; the client offered '5'. Run a TunnelClient of the server's release (TunnelServer --version, TunnelClient --version).")]
    [InlineData(404, "wrong-port", "Clients connect to the tunnel port 12001 (the server's --tunnel-url), not to the public port: use --server http://h:12001.",
        "--server points at TunnelServer's public port. Clients connect to the tunnel port 12001 (the server's --tunnel-url), not to the public port: use --server http://h:12001.")]
    [InlineData(403, "client-policies-off", "This server does not take visitor rules from clients.",
        "The server refused the login (403). This server does not take visitor rules from clients. Check --token, --session and the options this login asked for.")]
    public void Each_permanent_refusal_says_what_happened_and_what_to_do(int status, string type, string detail, string expected)
    {
        var refused = new UplinkRefusedException(status, Problem(status, type, detail));

        Assert.True(refused.IsPermanent);
        Assert.Equal(expected, refused.Detail);
        Assert.Equal(status, refused.StatusCode);
    }

    [Theory]
    [InlineData(503, "server-draining", "The server is draining and takes no new uplinks; connect again later.",
        "Server answered 503: The server is draining and takes no new uplinks; connect again later.")]
    [InlineData(404, "not-found", "the tunnel port answers only /tunnel2/connect", "Server answered 404: The tunnel port answers only /tunnel2/connect.")]
    public void A_refusal_that_may_pass_is_retried_with_its_detail_as_a_sentence(int status, string type, string detail, string expected)
    {
        var refused = new UplinkRefusedException(status, Problem(status, type, detail));

        Assert.False(refused.IsPermanent);
        Assert.Equal(expected, refused.Detail);
    }

    [Theory]
    [InlineData("", "Server answered 404: (no detail)")]
    [InlineData("<html>nginx</html>", "Server answered 404: <html>nginx</html>.")]
    [InlineData("{\"type\": 1", "Server answered 404: {\"type\": 1.")]
    public void An_answer_that_is_not_a_Tunnel2_problem_is_retried_as_it_came(string body, string expected)
    {
        var refused = new UplinkRefusedException(404, body);

        Assert.False(refused.IsPermanent);
        Assert.Equal(expected, refused.Detail);
    }

    [Fact]
    public void A_401_without_a_known_type_still_stops_the_client()
    {
        Assert.True(new UplinkRefusedException(401, "").IsPermanent);
        Assert.True(new UplinkRefusedException(403, "forbidden").IsPermanent);
    }

    [Theory]
    [InlineData("the server does not carry TCP tunnels", "The server does not carry TCP tunnels.")]
    [InlineData("Done!", "Done!")]
    [InlineData("  ", "")]
    public void A_detail_becomes_a_sentence(string detail, string expected) => Assert.Equal(expected, LoginRefusal.Sentence(detail));

    private static string Problem(int status, string type, string detail) =>
        $$"""{"type":"urn:tunnel2:problem:{{type}}","title":"Refused","status":{{status}},"detail":"{{detail}}","instance":"/tunnel2/connect"}""";
}
