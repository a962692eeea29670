using System.Net;
using System.IO.Pipelines;
using System.Text;
using Tunnel2.Protocol.Http1;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.UnitTests.Handshake;

/// <summary>The handshake decision with the address's limits, on heads, without a socket.</summary>
public sealed class LoginAdmissionTests
{
    private const string Token = "the-token-123";
    private static readonly IPAddress Remote = IPAddress.Parse("192.0.2.9");

    [Fact]
    public async Task A_draining_server_refuses_before_the_token_is_read_so_nothing_counts_against_the_address()
    {
        var drain = new PublicDrain();
        using var guard = new AddressGuard(new FailedAttempts(perMinute: 2), maxUplinks: 10);
        var admission = new LoginAdmission(new LoginDecision(new ClientAuthenticator(Token, file: null), retryAfterSeconds: 7), guard, drain);

        drain.Begin();
        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(503, admission.Decide(await HeadAsync("Bearer wrong"), Remote).Refused!.Status); // decided before the token
        }

        Assert.Equal(AttemptVerdict.Passed, guard.Judge(Remote, failed: false, out _));
    }

    [Fact]
    public async Task An_accepted_login_holds_a_place_under_the_cap_until_released_and_a_login_without_an_address_is_not_limited()
    {
        using var guard = new AddressGuard(new FailedAttempts(perMinute: 2), maxUplinks: 1);
        var admission = new LoginAdmission(new LoginDecision(new ClientAuthenticator(Token, file: null), retryAfterSeconds: 7), guard, new PublicDrain());

        Assert.NotNull(admission.Decide(await HeadAsync("Bearer " + Token), Remote).Accepted);
        Assert.Equal("too-many-uplinks", admission.Decide(await HeadAsync("Bearer " + Token), Remote).Refused!.Reason);
        admission.Release(Remote);
        Assert.NotNull(admission.Decide(await HeadAsync("Bearer " + Token), Remote).Accepted);

        for (int i = 0; i < 3; i++)
        {
            Assert.Equal("bad-token", admission.Decide(await HeadAsync("Bearer wrong"), peer: null).Refused!.Reason);
        }

        Assert.Equal("bad-token", admission.Decide(await HeadAsync("Bearer wrong"), Remote).Refused!.Reason);
        Assert.Equal("bad-token", admission.Decide(await HeadAsync("Bearer wrong"), Remote).Refused!.Reason);
        Assert.Equal("too-many-failed-logins", admission.Decide(await HeadAsync("Bearer " + Token), Remote).Refused!.Reason);
    }

    private static async Task<Http1Head> HeadAsync(string authorization) =>
        (await Http1Head.ReadAsync(PipeReader.Create(new MemoryStream(Encoding.ASCII.GetBytes(
            $"GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: tunnel2\r\nAuthorization: {authorization}\r\n"
            + "Tunnel2-Session: s-1\r\nTunnel2-Version: 3\r\n\r\n"))), 32 * 1024, CancellationToken.None))!;
}
