using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Http1;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.UnitTests.Handshake;

/// <summary>A head that fails several checks gets the first one's refusal, in the order docs/protocol.md §1 gives.</summary>
public sealed class LoginDecisionOrderTests
{
    private const string Token = "the-token-123";
    private const string Good = "Connection: Upgrade\r\nUpgrade: tunnel2\r\nAuthorization: Bearer " + Token + "\r\nTunnel2-Session: s-1\r\nTunnel2-Version: 3\r\n";
    private static readonly LoginDecision Decision = new(new ClientAuthenticator(Token, file: null), retryAfterSeconds: 7);

    [Theory]
    [InlineData("POST", "Connection: close\r\n", true, "not-found")] // the path and method before draining
    [InlineData("GET", "Connection: close\r\n", true, "server-draining")] // draining before the upgrade
    [InlineData("GET", "Connection: Upgrade\r\nUpgrade: tunnel2\r\nAuthorization: Bearer wrong\r\nTunnel2-Session: ..\r\n", false, "bad-token")]
    [InlineData("GET", Good + "Tunnel2-Instance: bad id\r\nTunnel2-Weight: 0\r\n", false, "bad-instance")] // before the weight
    [InlineData("GET", "Connection: Upgrade\r\nUpgrade: tunnel2\r\nAuthorization: Bearer " + Token + "\r\nTunnel2-Session: s-1\r\nTunnel2-Version: 99\r\nTunnel2-Weight: 0\r\n", false, "bad-version")]
    [InlineData("GET", Good + "Tunnel2-Weight: 0\r\nTunnel2-Health: maybe\r\n", false, "bad-weight")] // before the health
    [InlineData("GET", Good + "Tunnel2-Health: maybe\r\nContent-Length: 5\r\n", false, "bad-health")] // before the body
    [InlineData("GET", Good + "Content-Length: 5\r\nTunnel2-Visitor-Deny: 10.0.0.0/40\r\n", false, "handshake-body")] // before the visitor rules
    public async Task The_first_failing_check_decides(string method, string headers, bool draining, string reason)
    {
        Http1Head head = (await Http1Head.ReadAsync(
            PipeReader.Create(new MemoryStream(Encoding.ASCII.GetBytes($"{method} /tunnel2/connect HTTP/1.1\r\nHost: t\r\n{headers}\r\n"))),
            32 * 1024, CancellationToken.None))!;

        (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = Decision.Decide(head, draining);

        Assert.Null(accepted);
        Assert.Equal(reason, refused!.Reason);
    }
}
