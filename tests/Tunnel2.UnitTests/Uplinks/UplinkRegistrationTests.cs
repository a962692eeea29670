using System.IO.Pipelines;
using System.Net.Sockets;
using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks;
using Tunnel2.TunnelServer.Uplinks.Handshake;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Uplinks;

/// <summary>The last layer alone, over in-memory pipes: the uplink is registered for its session while it runs, and only then.</summary>
public sealed class UplinkRegistrationTests
{
    [Fact]
    public async Task The_uplink_serves_its_session_with_the_declared_weight_until_its_connection_ends()
    {
        using var probe = new AcceptanceProbe();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var registry = new SessionRegistry();
        var registration = new UplinkRegistration(new UplinkSettings(), registry,
            new CredentialRevocation(NullLogger<CredentialRevocation>.Instance), probe.Events, NullLoggerFactory.Instance);
        var toServer = new Pipe();
        var toClient = new Pipe();
        var connection = new UplinkConnection(socket, Stream.Null, CancellationToken.None)
        {
            Transport = new DuplexPipe(toServer.Reader, toClient.Writer),
            Accepted = new HandshakeAcceptance("s-1", "i-1", HandshakeProtocol.CurrentVersion, null, Weight: 3),
        };

        Task running = registration.RunAsync(connection);
        await Eventually.WaitUntilAsync(() => registry.GetMembers("s-1").Count == 1, "the uplink registers for its session");
        SessionMember member = registry.GetMembers("s-1")[0];
        long connected = probe.Uplinks;
        await toServer.Writer.CompleteAsync(); // the client's side of the connection ends
        await running.WithTimeout();

        Assert.Equal((3, "i-1", "upgrade"), (member.Weight, member.InstanceId, member.Transport));
        Assert.Equal(1, connected);
        Assert.Empty(registry.GetMembers("s-1"));
        Assert.Equal(0, probe.Uplinks);
    }
}
