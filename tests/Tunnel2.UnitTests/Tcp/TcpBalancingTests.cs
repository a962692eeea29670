using System.IO.Pipelines;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Tcp;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Tcp;

/// <summary>
/// How a TCP port picks among its clients with the shared strategies: least requests counts open TCP connections (not
/// the uplink's HTTP streams), and a client whose target refused is passed over for the ejection backoff.
/// </summary>
public sealed class TcpBalancingTests
{
    private const long Frequency = 1_000; // timestamps in milliseconds
    private static readonly TcpServerOptions Ejecting = new() { EjectAfter = 1, EjectionBackoff = TimeSpan.FromSeconds(1), MaxEjectionBackoff = TimeSpan.FromSeconds(4) };

    [Fact]
    public void Least_requests_takes_the_client_with_fewer_open_tcp_connections_whatever_its_http_streams()
    {
        TcpMember busyHttp = new(NewUplink(), weight: 1), busyTcp = new(NewUplink(), weight: 1);
        for (int i = 0; i < 5; i++)
        {
            busyHttp.Uplink.OpenStreamOrFail(new RequestHead("GET", "/", []), endStream: true);
        }

        busyTcp.Opened();
        TcpMember[] members = [busyHttp, busyTcp];
        uint cursor = 0;

        int toBusyHttp = Enumerable.Range(0, 100).Count(_ =>
            MemberPicker.Pick(members, [], ref cursor, BalancingStrategy.LeastRequests, NoAffinity.Instance, null, null, 0) == busyHttp);

        Assert.Equal(100, toBusyHttp);
        busyTcp.Closed();
        busyHttp.Opened();
        Assert.Same(busyTcp, MemberPicker.Pick(members, [], ref cursor, BalancingStrategy.LeastRequests, NoAffinity.Instance, null, null, 0));
    }

    [Fact]
    public void Round_robin_spreads_callers_evenly_whatever_they_hold_open()
    {
        TcpMember a = new(NewUplink(), 1), b = new(NewUplink(), 1);
        a.Opened();
        a.Opened();
        TcpMember[] members = [a, b];
        uint cursor = 0;

        int toA = Enumerable.Range(0, 100).Count(_ =>
            MemberPicker.Pick(members, [], ref cursor, BalancingStrategy.RoundRobin, NoAffinity.Instance, null, null, 0) == a);

        Assert.Equal(50, toA);
    }

    [Fact]
    public void A_client_whose_target_refused_is_passed_over_for_the_backoff_doubled_while_it_keeps_refusing()
    {
        TcpMember refusing = new(NewUplink(), 1), other = new(NewUplink(), 1);
        TcpMember[] members = [refusing, other];
        uint cursor = 0;

        Assert.True(refusing.OnTargetRefused(0, Frequency, Ejecting.Ejection(), out TimeSpan first));
        Assert.Equal(TimeSpan.FromSeconds(1), first);
        Assert.All(Enumerable.Range(0, 10), _ =>
            Assert.Same(other, MemberPicker.Pick(members, [], ref cursor, BalancingStrategy.RoundRobin, NoAffinity.Instance, null, null, 999)));
        Assert.True(refusing.CanTake(1_000));

        Assert.True(refusing.OnTargetRefused(1_000, Frequency, Ejecting.Ejection(), out TimeSpan second));
        Assert.Equal(TimeSpan.FromSeconds(2), second);
        Assert.False(refusing.CanTake(2_999));

        refusing.OnTargetConnected(); // a connection its target took: the next ejection starts from the first backoff again
        Assert.True(refusing.OnTargetRefused(3_000, Frequency, Ejecting.Ejection(), out TimeSpan afterGood));
        Assert.Equal(TimeSpan.FromSeconds(1), afterGood);
    }

    [Fact]
    public void With_eject_after_zero_a_refusing_client_keeps_its_turn()
    {
        TcpMember refusing = new(NewUplink(), 1);

        Assert.False(refusing.OnTargetRefused(0, Frequency, new TcpServerOptions { EjectAfter = 0 }.Ejection(), out _));
        Assert.True(refusing.CanTake(1));
    }

    [Fact]
    public void An_unready_or_closing_client_takes_no_tcp_caller()
    {
        TcpMember unready = new(NewUplink(peerReady: false), 1), draining = new(NewUplink(), 1);
        draining.Uplink.BeginDrain();
        uint cursor = 0;

        Assert.False(unready.CanTake(0));
        Assert.False(draining.CanTake(0));
        Assert.Null(MemberPicker.Pick([unready, draining], [], ref cursor, BalancingStrategy.RoundRobin, NoAffinity.Instance, null, null, 0));
    }

    /// <summary>An uplink over in-memory pipes; it need not run for the picker.</summary>
    private static Uplink NewUplink(bool peerReady = true) =>
        new(new DuplexPipe(new Pipe().Reader, new Pipe().Writer), new UplinkSettings(), UplinkRole.Server, NullLogger.Instance)
        {
            PeerReady = peerReady,
        };
}
