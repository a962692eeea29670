using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.TunnelServer.Configuration;
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

    private TcpSessions Create(string? portRange)
    {
        var server = new TunnelServerOptions { Tcp = new TcpServerOptions { PortRange = portRange, BindAddress = "127.0.0.1" } };
        IOptions<ProxyEntryOptions> proxy = Options.Create(new ProxyEntryOptions());
        return new TcpSessions(Options.Create(server), proxy, new VisitorAccess(proxy, NullLogger<VisitorAccess>.Instance),
            new TcpMetrics(_services.GetRequiredService<IMeterFactory>()), NullLogger<TcpSessions>.Instance);
    }

    /// <summary>Consecutive loopback ports free now, below the ephemeral range.</summary>
    private static (int First, int Last) FreeRange(int count)
    {
        for (int attempt = 0; attempt < 100; attempt++)
        {
            int first = Random.Shared.Next(20_000, 32_000);
            if (Enumerable.Range(first, count).All(IsFree))
            {
                return (first, first + count - 1);
            }
        }

        throw new InvalidOperationException("no free range of loopback ports");
    }

    private static bool IsFree(int port)
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, port));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
