using System.IO.Pipelines;
using System.Net;
using System.Text;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Http1;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.UnitTests.Handshake;

/// <summary>Which address a login is judged by: the socket's peer, or the caller behind a trusted proxy.</summary>
public sealed class LoginPeerTests
{
    private static readonly IPEndPoint Edge = new(IPAddress.Parse("10.0.0.5"), 40000);

    [Fact]
    public async Task Without_trusted_proxies_the_socket_peer_is_the_address_whatever_the_head_says()
    {
        var peers = new LoginPeer([]);
        Assert.Equal(IPAddress.Parse("10.0.0.5"), peers.Resolve(Edge, await HeadAsync("X-Forwarded-For: 198.51.100.7")));
    }

    [Fact]
    public async Task Behind_a_trusted_edge_the_caller_in_X_Forwarded_For_is_the_address()
    {
        var peers = new LoginPeer(Networks("10.0.0.0/8"));
        Assert.Equal(IPAddress.Parse("198.51.100.7"), peers.Resolve(Edge, await HeadAsync("X-Forwarded-For: 198.51.100.7")));
    }

    [Fact]
    public async Task A_caller_cannot_pick_its_address_by_sending_its_own_X_Forwarded_For()
    {
        // The caller sent "1.2.3.4"; the edge appended the caller's real address: the rightmost untrusted entry wins.
        var peers = new LoginPeer(Networks("10.0.0.0/8"));
        Assert.Equal(IPAddress.Parse("203.0.113.9"), peers.Resolve(Edge, await HeadAsync("X-Forwarded-For: 1.2.3.4, 203.0.113.9")));
    }

    [Fact]
    public async Task Chained_trusted_proxies_are_walked_back_across_repeated_fields()
    {
        var peers = new LoginPeer(Networks("10.0.0.0/8"));
        IPAddress? peer = peers.Resolve(Edge, await HeadAsync("X-Forwarded-For: 203.0.113.9", "X-Forwarded-For: 10.1.2.3"));
        Assert.Equal(IPAddress.Parse("203.0.113.9"), peer);
    }

    [Fact]
    public async Task A_trusted_peer_without_the_header_or_with_garbage_in_it_is_judged_by_itself()
    {
        var peers = new LoginPeer(Networks("10.0.0.0/8"));
        Assert.Equal(IPAddress.Parse("10.0.0.5"), peers.Resolve(Edge, await HeadAsync()));
        Assert.Equal(IPAddress.Parse("10.0.0.5"), peers.Resolve(Edge, await HeadAsync("X-Forwarded-For: not-an-address")));
    }

    [Fact]
    public async Task An_IPv4_peer_on_a_dual_mode_socket_matches_an_IPv4_trusted_network()
    {
        var peers = new LoginPeer(Networks("127.0.0.1/32"));
        var mapped = new IPEndPoint(IPAddress.Parse("::ffff:127.0.0.1"), 40000);
        Assert.Equal(IPAddress.Parse("192.0.2.44"), peers.Resolve(mapped, await HeadAsync("X-Forwarded-For: 192.0.2.44")));
    }

    private static List<IPNetwork> Networks(string list)
    {
        Assert.True(NetworkList.TryParse(list, out List<IPNetwork> networks));
        return networks;
    }

    private static async Task<Http1Head> HeadAsync(params string[] fields) =>
        (await Http1Head.ReadAsync(PipeReader.Create(new MemoryStream(Encoding.ASCII.GetBytes(
            "GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: tunnel2\r\n"
            + string.Concat(fields.Select(f => f + "\r\n")) + "\r\n"))), 32 * 1024, CancellationToken.None))!;
}
