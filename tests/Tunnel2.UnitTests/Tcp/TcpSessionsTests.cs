using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.ProxyEntry.Tcp;
using Tunnel2.TunnelServer.Tcp;

namespace Tunnel2.UnitTests.Tcp;

/// <summary>How sessions get their TCP ports from the range: one per session, kept across reconnects, and a refusal when none is left.</summary>
public sealed class TcpSessionsTests : IDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();

    public void Dispose() => _services.Dispose();

    [Fact]
    public void Without_a_range_or_a_fixed_port_a_tcp_login_gets_403_tcp_off()
    {
        using TcpSessions sessions = Create(portRange: null);

        TcpReservation reservation = sessions.Reserve("db");

        Assert.Null(reservation.Lease);
        Assert.Equal((403, "tcp-off"), (reservation.Refusal!.Status, reservation.Refusal.Reason));
    }

    [Fact]
    public void Sessions_share_out_the_range_keep_their_port_across_a_reconnect_and_get_503_when_it_is_full()
    {
        (int first, int last) = FreeRange(2);
        using TcpSessions sessions = Create($"{first}-{last}");

        TcpLease a = sessions.Reserve("a").Lease!;
        TcpLease b = sessions.Reserve("b").Lease!;
        TcpLease alsoA = sessions.Reserve("a").Lease!; // a second client of the session shares its port
        TcpReservation c = sessions.Reserve("c");

        Assert.NotEqual(a.Port, b.Port);
        Assert.Equal(a.Port, alsoA.Port);
        Assert.Equal((503, "tcp-ports-exhausted"), (c.Refusal!.Status, c.Refusal.Reason));
        Assert.Contains(c.Refusal.Headers, header => header.Key == "Retry-After");

        int aPort = a.Port;
        a.Dispose();
        Assert.Equal(aPort, sessions.PortOf("a")); // still open: the second client holds it
        alsoA.Dispose();
        Assert.Null(sessions.PortOf("a"));
        b.Dispose();
    }

    [Fact]
    public void A_session_that_comes_back_gets_its_last_port_though_the_range_moved_on()
    {
        (int first, int last) = FreeRange(3);
        using TcpSessions sessions = Create($"{first}-{last}");
        var ports = new Dictionary<string, int>();
        foreach (string session in new[] { "a", "b", "c" })
        {
            using TcpLease lease = sessions.Reserve(session).Lease!; // each client leaves again at once
            ports[session] = lease.Port;
        }

        Assert.Equal(3, ports.Values.Distinct().Count());
        using TcpLease b = sessions.Reserve("b").Lease!; // the range's next free port would be a's
        using TcpLease a = sessions.Reserve("a").Lease!;
        Assert.Equal((ports["a"], ports["b"]), (a.Port, b.Port));
    }

    [Fact]
    public void Two_servers_that_share_nothing_give_a_session_the_same_port_of_the_same_range()
    {
        (int first, int last) = FreeRange(20, "127.0.0.2", "127.0.0.3");
        using TcpSessions node1 = Create($"{first}-{last}", "127.0.0.2");
        using TcpSessions node2 = Create($"{first}-{last}", "127.0.0.3");
        string[] sessions = ["db", "cache", "ssh-bastion", "22222222-2222-2222-2222-222222222222"];

        // Logins reaching the nodes in opposite orders: where a session's search starts depends on its id only.
        var onNode1 = sessions.ToDictionary(session => session, session => node1.Reserve(session).Lease!.Port);
        var onNode2 = sessions.Reverse().ToDictionary(session => session, session => node2.Reserve(session).Lease!.Port);

        Assert.All(sessions, session => Assert.Equal(onNode1[session], onNode2[session]));
        Assert.Equal(sessions.Length, onNode1.Values.Distinct().Count());
    }

    [Fact]
    public void A_login_that_names_the_port_another_node_gave_gets_it_or_a_503_while_another_session_holds_it()
    {
        (int first, int last) = FreeRange(5);
        using TcpSessions sessions = Create($"{first}-{last}");
        int wanted = first + 1; // not where the search for "db" starts (first + 3)

        using TcpLease db = sessions.Reserve("db", wanted).Lease!;
        TcpReservation clash = sessions.Reserve("cache", wanted);
        using TcpLease outside = sessions.Reserve("web", 1).Lease!; // outside the range: the node's own choice

        Assert.Equal(wanted, db.Port);
        Assert.Equal((503, "tcp-ports-exhausted"), (clash.Refusal!.Status, clash.Refusal.Reason));
        Assert.Contains("Tunnel2-Tcp-Port", clash.Refusal.Detail, StringComparison.Ordinal);
        Assert.InRange(outside.Port, first, last);
        Assert.NotEqual(wanted, outside.Port);
    }

    private TcpSessions Create(string? portRange, string bindAddress = "127.0.0.1")
    {
        var server = new TunnelServerOptions { Tcp = new TcpServerOptions { PortRange = portRange, BindAddress = bindAddress } };
        IOptions<ProxyEntryOptions> proxy = Options.Create(new ProxyEntryOptions());
        return new TcpSessions(Options.Create(server), proxy, new TcpMetrics(_services.GetRequiredService<IMeterFactory>()), NullLogger<TcpSessions>.Instance);
    }

    /// <summary>Consecutive ports free now on each of <paramref name="addresses"/> (127.0.0.1 by default), below the ephemeral range.</summary>
    private static (int First, int Last) FreeRange(int count, params string[] addresses)
    {
        IPAddress[] on = addresses.Length == 0 ? [IPAddress.Loopback] : [.. addresses.Select(IPAddress.Parse)];
        for (int attempt = 0; attempt < 100; attempt++)
        {
            int first = Random.Shared.Next(20_000, 32_000);
            if (Enumerable.Range(first, count).All(port => on.All(address => IsFree(address, port))))
            {
                return (first, first + count - 1);
            }
        }

        throw new InvalidOperationException("no free range of loopback ports");
    }

    private static bool IsFree(IPAddress address, int port)
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            probe.Bind(new IPEndPoint(address, port));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
