using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Hosting;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks;
using Tunnel2.TunnelServer.Uplinks.Handshake;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Uplinks;

/// <summary>The handshake layer alone, over in-memory streams: what a refused or silent client gets, and that it goes no further.</summary>
public sealed class HandshakeLayerTests
{
    private const string Token = "the-token-123";

    [Fact]
    public async Task A_wrong_token_is_answered_with_the_401_problem_and_goes_no_further()
    {
        string answer = await RefusedAsync(
            "GET /tunnel2/connect?x=1 HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: tunnel2\r\nAuthorization: Bearer wrong\r\n\r\n",
            TestTimeouts.Default, "bad-token");

        Assert.StartsWith("HTTP/1.1 401 Unauthorized\r\n", answer, StringComparison.Ordinal);
        Assert.Contains("WWW-Authenticate: Bearer\r\n", answer, StringComparison.Ordinal);
        Assert.Contains("\"type\":\"urn:tunnel2:problem:bad-token\"", answer, StringComparison.Ordinal);
        Assert.Contains("\"instance\":\"/tunnel2/connect?x=1\"", answer, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_head_that_never_ends_is_answered_with_408_for_the_tunnel_path()
    {
        string answer = await RefusedAsync("GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\n", TimeSpan.FromMilliseconds(50), "handshake-timeout");

        Assert.StartsWith("HTTP/1.1 408 Request Timeout\r\n", answer, StringComparison.Ordinal);
        Assert.Contains("\"instance\":\"/tunnel2/connect\"", answer, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_client_that_closes_without_a_word_gets_no_answer_and_is_not_counted()
    {
        using var probe = new AcceptanceProbe();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, PipeStream client) = PipeStream.CreatePair();
        bool reached = false;

        client.Dispose();
        await Layer(probe, TestTimeouts.Default).RunAsync(new UplinkConnection(socket, server, CancellationToken.None), _ => Task.FromResult(reached = true)).WithTimeout();

        Assert.False(reached);
        Assert.Empty(server.Written);
        Assert.Empty(probe.Refused);
    }

    private static async Task<string> RefusedAsync(string request, TimeSpan timeout, string reason)
    {
        using var probe = new AcceptanceProbe();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, PipeStream client) = PipeStream.CreatePair();
        bool reached = false;

        await client.WriteAsync(Encoding.ASCII.GetBytes(request));
        await client.FlushAsync();
        await Layer(probe, timeout).RunAsync(new UplinkConnection(socket, server, CancellationToken.None), _ => Task.FromResult(reached = true)).WithTimeout();

        Assert.False(reached);
        Assert.Equal([reason], probe.Refused);
        return Encoding.ASCII.GetString(server.Written);
    }

    private static HandshakeLayer Layer(AcceptanceProbe probe, TimeSpan timeout)
    {
        IOptions<ProxyEntryOptions> proxy = Options.Create(new ProxyEntryOptions());
        var decision = new LoginDecision(new ClientAuthenticator(Token, file: null), retryAfterSeconds: 7);
        var admission = new LoginAdmission(decision, new AddressGuard(new FailedAttempts(perMinute: 10), maxUplinks: 10), new PublicDrain());
        var responder = new HandshakeResponder(new UplinkSettings(), new ServerEndpoints(), proxy);
        return new HandshakeLayer(new HandshakeReader(timeout), new LoginPeer([]), admission, responder, probe.Events,
            new SessionPolicies());
    }
}
