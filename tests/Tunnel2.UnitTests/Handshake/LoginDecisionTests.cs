using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Http1;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.UnitTests.Handshake;

/// <summary>The server's checks of an upgrade request, in order, and what each refusal tells the client.</summary>
public sealed class LoginDecisionTests
{
    private const string Token = "the-token-123";
    private const string WebSocketKey = "dGhlIHNhbXBsZSBub25jZQ==";
    private static readonly LoginDecision Handshake = new(new ClientAuthenticator(Token, file: null), retryAfterSeconds: 7);

    [Fact]
    public async Task A_complete_plain_upgrade_is_accepted_with_the_highest_common_version()
    {
        (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = Handshake.Decide(await HeadAsync(Request(version: "2, 3")), draining: false);

        Assert.Null(refused);
        Assert.Equal(new HandshakeAcceptance("s-1", "i-1", 3, null), accepted! with { Login = null });
        Assert.Equal(ClientAuthenticator.SharedTokenName, accepted.Login?.Name);
    }

    [Fact]
    public async Task A_websocket_upgrade_is_accepted_and_answered_with_the_RFC_6455_accept_value()
    {
        (HandshakeAcceptance? accepted, _) = Handshake.Decide(await HeadAsync(Request(upgrade: "websocket", extra: $"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {WebSocketKey}\r\n")), draining: false);

        Assert.True(accepted!.IsWebSocket);
        Assert.Equal("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", WebSocketKeys.Accept(accepted.WebSocketKey!)); // RFC 6455 §1.3
    }

    [Theory]
    [InlineData("POST", "/tunnel2/connect", 404, "not-found")]
    [InlineData("GET", "/elsewhere", 404, "not-found")]
    [InlineData("GET", "/tunnel2/connect-more", 404, "not-found")]
    public async Task The_wrong_method_or_path_gets_404(string method, string path, int status, string reason)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(method: method, path: path));
        Assert.Equal((status, reason), (refusal.Status, refusal.Reason));
    }

    [Fact]
    public async Task A_draining_server_answers_503_with_retry_after_before_looking_at_the_token()
    {
        (_, HandshakeRefusal? refusal) = Handshake.Decide(await HeadAsync(Request(authorization: "Bearer wrong")), draining: true);

        Assert.Equal((503, "server-draining"), (refusal!.Status, refusal.Reason));
        Assert.Contains(KeyValuePair.Create("Retry-After", "7"), refusal.Headers);
    }

    [Theory]
    [InlineData("h2c", "Upgrade", "HTTP/1.1")]
    [InlineData("tunnel2", "keep-alive", "HTTP/1.1")]
    [InlineData("tunnel2", "Upgrade", "HTTP/1.0")]
    public async Task A_request_that_does_not_upgrade_to_tunnel2_or_websocket_gets_426_naming_the_upgrade(string upgrade, string connection, string version)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(upgrade: upgrade, connection: connection, httpVersion: version));

        Assert.Equal((426, "upgrade-required"), (refusal.Status, refusal.Reason));
        Assert.Contains(KeyValuePair.Create("Upgrade", "tunnel2"), refusal.Headers);
    }

    [Fact]
    public async Task A_websocket_upgrade_of_another_version_gets_426_and_one_without_a_proper_key_gets_400()
    {
        HandshakeRefusal version = await RefusalAsync(Request(upgrade: "websocket", extra: $"Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: {WebSocketKey}\r\n"));
        HandshakeRefusal key = await RefusalAsync(Request(upgrade: "websocket", extra: "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: c2hvcnQ=\r\n"));

        Assert.Equal((426, "websocket-version"), (version.Status, version.Reason));
        Assert.Contains(KeyValuePair.Create("Sec-WebSocket-Version", "13"), version.Headers);
        Assert.Equal((400, "bad-websocket-key"), (key.Status, key.Reason));
    }

    [Theory]
    [InlineData("Bearer wrong-token")]
    [InlineData("Basic dGhlLXRva2VuLTEyMw==")]
    [InlineData(null)]
    public async Task A_missing_or_wrong_token_gets_401_with_a_bearer_challenge(string? authorization)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(authorization: authorization));

        Assert.Equal((401, "bad-token"), (refusal.Status, refusal.Reason));
        Assert.Contains(KeyValuePair.Create("WWW-Authenticate", "Bearer"), refusal.Headers);
    }

    [Theory]
    [InlineData("bad session", "i-1", "1, 2", "bad-session")]
    [InlineData("", "i-1", "2", "bad-session")]
    [InlineData("s-1", "bad/instance", "2", "bad-instance")]
    [InlineData("s-1", "i-1", "1", "bad-version")]
    [InlineData("s-1", "i-1", "", "bad-version")]
    public async Task Bad_ids_and_versions_get_400_naming_what_is_wrong(string session, string instance, string version, string reason)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(session: session, instance: instance, version: version));

        Assert.Equal((400, reason), (refusal.Status, refusal.Reason));
    }

    [Theory]
    [InlineData("Content-Length: 5\r\n")]
    [InlineData("Transfer-Encoding: chunked\r\n")]
    public async Task An_upgrade_request_with_a_body_gets_400(string framing)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(extra: framing));

        Assert.Equal((400, "handshake-body"), (refusal.Status, refusal.Reason));
    }

    [Fact]
    public void A_refusal_is_a_closing_problem_details_answer()
    {
        string answer = Encoding.ASCII.GetString(HandshakeAnswer.Refusal(new HandshakeRefusal(401, "bad-token", "Unauthorized", "Send a token."), "/tunnel2/connect"));

        Assert.StartsWith("HTTP/1.1 401 Unauthorized\r\n", answer, StringComparison.Ordinal);
        Assert.Contains("Content-Type: application/problem+json\r\n", answer, StringComparison.Ordinal);
        Assert.Contains("Connection: close\r\n", answer, StringComparison.Ordinal);
        string body = answer[(answer.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4)..];
        Assert.Contains($"Content-Length: {Encoding.UTF8.GetByteCount(body)}\r\n", answer, StringComparison.Ordinal);
        Assert.Contains("\"type\":\"urn:tunnel2:problem:bad-token\"", body, StringComparison.Ordinal);
        Assert.Contains("\"status\":401", body, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_version_4_login_carries_its_weight_and_health()
    {
        (HandshakeAcceptance? accepted, _) = Handshake.Decide(
            await HeadAsync(Request(version: "4, 3", extra: "Tunnel2-Weight: 7\r\nTunnel2-Health: unready\r\n")), draining: false);

        Assert.Equal(new HandshakeAcceptance("s-1", "i-1", 4, null, Weight: 7, Ready: false), accepted! with { Login = null });
        Assert.Equal(ClientAuthenticator.SharedTokenName, accepted.Login?.Name);
    }

    [Fact]
    public async Task A_login_without_weight_or_health_is_weight_1_and_ready()
    {
        (HandshakeAcceptance? accepted, _) = Handshake.Decide(await HeadAsync(Request(version: "4")), draining: false);

        Assert.Equal(1, accepted!.Weight);
        Assert.True(accepted.Ready);
    }

    [Theory]
    [InlineData("Tunnel2-Weight: 0", "bad-weight")]
    [InlineData("Tunnel2-Weight: 101", "bad-weight")]
    [InlineData("Tunnel2-Weight: -1", "bad-weight")]
    [InlineData("Tunnel2-Weight: 1.5", "bad-weight")]
    [InlineData("Tunnel2-Weight: ", "bad-weight")]
    [InlineData("Tunnel2-Health: READY", "bad-health")]
    [InlineData("Tunnel2-Health: ok", "bad-health")]
    public async Task A_weight_or_health_out_of_its_form_gets_400(string header, string reason)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(version: "4", extra: header + "\r\n"));

        Assert.Equal(400, refusal.Status);
        Assert.Equal(reason, refusal.Reason);
    }

    [Theory]
    [InlineData("..")]
    [InlineData(".")]
    [InlineData("a/b")]
    [InlineData("a%2Fb")]
    [InlineData("")]
    public async Task A_session_id_that_is_no_single_path_segment_gets_400(string session)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(session: session));

        Assert.Equal(400, refusal.Status);
        Assert.Equal("bad-session", refusal.Reason);
    }

    [Fact]
    public async Task A_session_id_of_129_characters_gets_400_and_128_pass()
    {
        Assert.Equal("bad-session", (await RefusalAsync(Request(session: new string('s', 129)))).Reason);
        (HandshakeAcceptance? accepted, _) = Handshake.Decide(await HeadAsync(Request(session: new string('s', 128))), draining: false);
        Assert.NotNull(accepted);
    }

    [Fact]
    public async Task A_token_logging_in_for_a_session_outside_its_patterns_gets_403_naming_no_token()
    {
        string path = Path.Combine(Path.GetTempPath(), $"credentials-{Guid.NewGuid():N}.json");
        await File.WriteAllTextAsync(path, Access.CredentialsTests.File(Access.CredentialsTests.Client("team-a", "team-a-token-0123456789", "team-a-*")));
        try
        {
            using var file = new CredentialsFile(path, new Tunnel2.ProxyEntry.Sessions.SessionPolicies(),
                Microsoft.Extensions.Logging.Abstractions.NullLogger<CredentialsFile>.Instance);
            var handshake = new LoginDecision(new ClientAuthenticator(sharedToken: null, file), retryAfterSeconds: 1);

            (HandshakeAcceptance? accepted, _) = handshake.Decide(await HeadAsync(Request(authorization: "Bearer team-a-token-0123456789", session: "team-a-web")), draining: false);
            (_, HandshakeRefusal? refused) = handshake.Decide(await HeadAsync(Request(authorization: "Bearer team-a-token-0123456789", session: "team-b-web")), draining: false);
            (_, HandshakeRefusal? shared) = handshake.Decide(await HeadAsync(Request(session: "team-a-web")), draining: false);

            Assert.Equal("team-a", accepted!.Login?.Name);
            Assert.Equal(403, refused!.Status);
            Assert.Equal("session-not-allowed", refused.Reason);
            Assert.Equal(("team-a", "team-b-web"), refused.OutsideCredential);
            Assert.DoesNotContain("team-a-token", refused.Detail, StringComparison.Ordinal);
            Assert.Equal(401, shared!.Status); // no --token on this server: the dev token is nobody's
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public async Task Visitor_rules_a_client_declares_are_taken_only_where_the_server_allows_them()
    {
        string rules = "Tunnel2-Visitor-Basic: carol:" + Access.CredentialsTests.AliceHtpasswd + "\r\nTunnel2-Visitor-Allow: 10.0.0.0/8, 2001:db8::/32\r\n";
        var allowing = new LoginDecision(new ClientAuthenticator(Token, file: null), retryAfterSeconds: 1, clientVisitorPolicies: true);

        (HandshakeAcceptance? accepted, _) = allowing.Decide(await HeadAsync(Request(extra: rules)), draining: false);
        HandshakeRefusal off = await RefusalAsync(Request(extra: rules));
        (_, HandshakeRefusal? malformed) = allowing.Decide(await HeadAsync(Request(extra: "Tunnel2-Visitor-Basic: carol:plain-password\r\n")), draining: false);
        (_, HandshakeRefusal? tooCostly) = allowing.Decide(await HeadAsync(Request(extra: "Tunnel2-Visitor-Basic: carol:$2y$31$BTDcgfGww9927df4MuFdlOSVk7rsICxhuU.4Pn/x/AxXuaoGL2yFa\r\n")), draining: false);
        (_, HandshakeRefusal? badNetwork) = allowing.Decide(await HeadAsync(Request(extra: "Tunnel2-Visitor-Deny: 10.0.0.0/40\r\n")), draining: false);

        Tunnel2.ProxyEntry.Access.VisitorPolicy policy = accepted!.DeclaredPolicy!;
        Assert.Equal("s-1", policy.Sessions.Text);
        Assert.True(policy.Rule<Tunnel2.ProxyEntry.Access.BasicAuthRule>()!.Users["carol"].Verify("carol", "wonderland"));
        Assert.Equal(2, policy.Rule<Tunnel2.ProxyEntry.Access.AddressRule>()!.Allow.Count);
        Assert.Equal((403, "client-policies-off"), (off.Status, off.Reason));
        Assert.Equal((400, "bad-visitor-policy"), (malformed!.Status, malformed.Reason));
        Assert.Equal((400, "bad-visitor-policy"), (badNetwork!.Status, badNetwork.Reason));
        Assert.Equal((400, "bad-visitor-policy"), (tooCostly!.Status, tooCostly.Reason)); // a cost of 31 would take the server's CPU for hours
    }

    private static async Task<HandshakeRefusal> RefusalAsync(string request)
    {
        (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = Handshake.Decide(await HeadAsync(request), draining: false);
        Assert.Null(accepted);
        return refused!;
    }

    [Fact]
    public async Task A_version_5_login_with_tcp_on_asks_for_a_tcp_port()
    {
        (HandshakeAcceptance? plain, _) = Handshake.Decide(await HeadAsync(Request(version: "5, 4, 3")), draining: false);
        (HandshakeAcceptance? tcp, _) = Handshake.Decide(await HeadAsync(Request(version: "5, 4, 3", extra: "Tunnel2-Tcp: on\r\n")), draining: false);

        Assert.Equal((5, false), (plain!.Version, plain.Tcp));
        Assert.Equal((5, true), (tcp!.Version, tcp.Tcp));
    }

    [Theory]
    [InlineData("4, 3", "on")]
    [InlineData("5", "yes")]
    [InlineData("5", "")]
    public async Task A_tcp_login_below_version_5_or_with_another_value_gets_400(string version, string value)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(version: version, extra: $"Tunnel2-Tcp: {value}\r\n"));

        Assert.Equal((400, "bad-tcp"), (refusal.Status, refusal.Reason));
    }

    [Fact]
    public async Task A_tcp_login_may_name_the_port_another_node_gave_the_session()
    {
        (HandshakeAcceptance? tcp, _) = Handshake.Decide(
            await HeadAsync(Request(version: "5", extra: "Tunnel2-Tcp: on\r\nTunnel2-Tcp-Port: 20007\r\n")), draining: false);

        Assert.Equal(20007, tcp!.TcpPort);
    }

    [Theory]
    [InlineData("0")]
    [InlineData("65536")]
    [InlineData("+80")]
    [InlineData("http")]
    public async Task A_tcp_port_that_is_not_a_port_gets_400(string value)
    {
        HandshakeRefusal refusal = await RefusalAsync(Request(version: "5", extra: $"Tunnel2-Tcp: on\r\nTunnel2-Tcp-Port: {value}\r\n"));

        Assert.Equal((400, "bad-tcp"), (refusal.Status, refusal.Reason));
    }

    private static string Request(
        string method = "GET",
        string path = "/tunnel2/connect",
        string httpVersion = "HTTP/1.1",
        string upgrade = "tunnel2",
        string connection = "Upgrade",
        string? authorization = "Bearer " + Token,
        string session = "s-1",
        string instance = "i-1",
        string version = "3",
        string extra = "") =>
        $"{method} {path} {httpVersion}\r\nHost: t\r\nConnection: {connection}\r\nUpgrade: {upgrade}\r\n"
        + (authorization is null ? string.Empty : $"Authorization: {authorization}\r\n")
        + $"Tunnel2-Session: {session}\r\nTunnel2-Instance: {instance}\r\nTunnel2-Version: {version}\r\n{extra}\r\n";

    private static async Task<Http1Head> HeadAsync(string request) =>
        (await Http1Head.ReadAsync(PipeReader.Create(new MemoryStream(Encoding.ASCII.GetBytes(request))), 32 * 1024, CancellationToken.None))!;
}
