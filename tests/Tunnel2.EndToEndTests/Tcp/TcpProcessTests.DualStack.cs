using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// Dual stack as deployed: a TunnelServer process whose TCP ports bind <c>::</c>, a session whose client allows only
/// 127.0.0.1/32. An IPv4 caller reaches the port as an IPv4-mapped IPv6 address and must be judged by its IPv4 address;
/// an IPv6 caller must be judged as IPv6, which an IPv4-only allow list refuses.
/// </summary>
public sealed partial class TcpProcessTests
{
    [Fact]
    public async Task A_dual_stack_server_process_judges_IPv4_callers_by_their_IPv4_address_and_IPv6_callers_as_IPv6()
    {
        AssertIPv6Loopback();
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-proc-dual-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), "--TunnelServer:Tcp:BindAddress=::", "--TunnelServer:ClientVisitorPolicies=true"],
            ClientArgs = ["--tcp", target.Address, "--cidr-allow", "127.0.0.1/32"],
        });
        int port = await PortAsync(stack);

        using Socket allowed = await EchoingAsync(port);
        int otherIPv4 = await AssertCutAsync(IPAddress.Parse("127.0.0.2"), IPAddress.Loopback, port);
        int ipv6 = await AssertCutAsync(IPAddress.IPv6Loopback, IPAddress.IPv6Loopback, port);

        await stack.Server.WaitForOutputAsync(DeniedLine(session, otherIPv4), TimeSpan.FromSeconds(15));
        await stack.Server.WaitForOutputAsync(DeniedLine(session, ipv6), TimeSpan.FromSeconds(15));
        Assert.Equal(1, target.AcceptedConnections);
        await allowed.SendAsync(new byte[] { 8 });
        Assert.Equal(new byte[] { 8 }, await TcpTunnel.ReadAsync(allowed, 1).WaitAsync(TimeSpan.FromSeconds(15)));
    }

    /// <summary>The test needs ::1; a machine without it fails the test with why, rather than skipping it.</summary>
    private static void AssertIPv6Loopback()
    {
        Assert.True(Socket.OSSupportsIPv6, "this machine has no IPv6: the dual-stack test needs ::1 on lo (`ip -6 addr show lo`)");
        using var probe = new Socket(AddressFamily.InterNetworkV6, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            probe.Bind(new IPEndPoint(IPAddress.IPv6Loopback, 0));
        }
        catch (SocketException ex)
        {
            Assert.Fail($"this machine has no IPv6 loopback (::1): {ex.SocketErrorCode}; the dual-stack test needs it on lo (`ip -6 addr show lo`)");
        }
    }

    /// <summary>A caller from <paramref name="from"/> is cut before anything reaches the target; returns its source port, to find its log line.</summary>
    private static async Task<int> AssertCutAsync(IPAddress from, IPAddress to, int port)
    {
        using var socket = new Socket(to.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.Bind(new IPEndPoint(from, 0));
        int sourcePort = ((IPEndPoint)socket.LocalEndPoint!).Port;
        try
        {
            await socket.ConnectAsync(new IPEndPoint(to, port));
            await socket.SendAsync(new byte[] { 1 });
        }
        catch (SocketException)
        {
            return sourcePort; // the reset reached the connect or the send: cut at once
        }

        Assert.True(await TcpTunnel.EndsWithinAsync(socket, TimeSpan.FromSeconds(15)), $"a caller from {from} should be cut");
        return sourcePort;
    }

    /// <summary>The server's refusal of the caller with this source port (the address may be written IPv4-mapped).</summary>
    private static System.Text.RegularExpressions.Regex DeniedLine(string session, int sourcePort) =>
        new($@"TCP caller \S+:{sourcePort.ToString(CultureInfo.InvariantCulture)} of session {session} refused: address-denied");
}
