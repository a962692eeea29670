using System.Net;
using System.Net.Sockets;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>A server whose TCP ports bind <c>::</c> takes IPv4 and IPv6 callers alike, and judges an IPv4 caller by its IPv4 address.</summary>
public sealed class TcpDualStackTests
{
    [Fact]
    public async Task A_port_bound_to_the_IPv6_any_address_takes_IPv4_and_IPv6_callers()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync("--TunnelServer:Tcp:BindAddress=::");
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-dual-{Guid.NewGuid():N}"[..30];
        int port = await TcpTunnel.StartClientAsync(stack, session, target);

        foreach (IPAddress loopback in new[] { IPAddress.Loopback, IPAddress.IPv6Loopback })
        {
            using var socket = new Socket(loopback.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            await socket.ConnectAsync(new IPEndPoint(loopback, port));
            await socket.SendAsync(new byte[] { 6 });
            Assert.Equal(new byte[] { 6 }, await TcpTunnel.ReadAsync(socket, 1).WaitAsync(TimeSpan.FromSeconds(15)));
        }

        Assert.Equal(2, target.AcceptedConnections);
    }

    [Fact]
    public async Task An_IPv4_caller_of_a_dual_stack_port_is_judged_by_its_IPv4_address()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync("--TunnelServer:Tcp:BindAddress=::", "--TunnelServer:ClientVisitorPolicies=true");
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-dual-deny-{Guid.NewGuid():N}"[..30];
        int port = await TcpTunnel.StartClientAsync(stack, session, target, "--cidr-deny", "127.0.0.0/8");

        bool cut = await TcpTunnel.IsCutAsync(port, [1], TimeSpan.FromSeconds(15));

        Assert.True(cut, "a caller from 127.0.0.1 (seen as ::ffff:127.0.0.1 on the dual-stack socket) should be cut");
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "address-denied"), "the refusal is logged");
        Assert.Equal(0, target.AcceptedConnections);
    }
}
