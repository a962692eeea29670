using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelServer.Tcp;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// A cluster of two TunnelServer processes that share nothing, on loopback: each node binds the sessions' TCP ports on
/// an address of its own (127.0.0.2, 127.0.0.3), as nodes on separate hosts would, so both can listen on one port
/// number. A client of both gets the same port from each, and a caller reaches its target through either node.
/// </summary>
public sealed partial class TcpClusterProcessTests
{
    private static readonly IPAddress Node1 = IPAddress.Parse("127.0.0.2"), Node2 = IPAddress.Parse("127.0.0.3");

    [Fact]
    public async Task Every_node_listens_on_the_port_the_first_gave_the_session_and_callers_get_through_each()
    {
        await using ScriptedTcpTarget target = TcpBalancingProcessTests.Tagged((byte)'T');
        string session = TcpBalancingProcessTests.Session("cluster");
        (int first, int last) = Range();
        string range = $"--TunnelServer:Tcp:PortRange={first}-{last}";

        // Where either node would place the session on its own is taken on node 1 only, so node 1 gives the next port,
        // and node 2, started later with that port free, gives node 1's because the client asks for it.
        int ownChoice = first + TcpPortChooser.StartInRange(session, last - first + 1);
        using var squatter = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        squatter.Bind(new IPEndPoint(Node1, ownChoice));
        squatter.Listen();
        int node2Tunnel = CommandLineTool.FreeLoopbackPort();

        await using TunnelProcess node1 = TcpBalancingProcessTests.StartServer(range, $"--TunnelServer:Tcp:BindAddress={Node1}");
        (_, Uri tunnel1) = await node1.WaitForServerUrlsAsync();
        await using TunnelProcess client = TcpBalancingProcessTests.StartClient("client", tunnel1, session, target.Address,
            "--server", $"http://127.0.0.1:{node2Tunnel}", "--TunnelClient:Uplink:ReconnectMaxDelay=00:00:01");
        int port = int.Parse((await client.WaitForOutputAsync(ForwardingOn(Node1), TimeSpan.FromSeconds(30))).Groups["port"].Value,
            CultureInfo.InvariantCulture);
        Assert.NotEqual(ownChoice, port);

        await using TunnelProcess node2 = TunnelProcess.StartServer("node-2",
            ["--public-url", "http://127.0.0.1:0", "--tunnel-url", $"http://127.0.0.1:{node2Tunnel}", "--token", TunnelStack.Token, range,
                $"--TunnelServer:Tcp:BindAddress={Node2}"]);
        Match second = await client.WaitForOutputAsync(ForwardingOn(Node2), TimeSpan.FromSeconds(30));

        Assert.Equal(port, int.Parse(second.Groups["port"].Value, CultureInfo.InvariantCulture));
        foreach (IPAddress node in new[] { Node1, Node2 })
        {
            (Socket socket, byte tag) = await TcpBalancingProcessTests.ConnectTaggedAsync(port, node);
            using (socket)
            {
                Assert.Equal((byte)'T', tag);
            }
        }

        Assert.Equal(2, target.AcceptedConnections);
        Assert.DoesNotMatch(PortDiffersLine(), client.Output);
    }

    /// <summary>Fifty consecutive ports free now on both nodes' addresses, below the ephemeral range.</summary>
    private static (int First, int Last) Range()
    {
        for (int attempt = 0; attempt < 100; attempt++)
        {
            int first = 20_000 + (Random.Shared.Next(0, 240) * 50);
            if (Enumerable.Range(first, 50).All(port => IsFree(Node1, port) && IsFree(Node2, port)))
            {
                return (first, first + 49);
            }
        }

        throw new InvalidOperationException("no range of ports free on 127.0.0.2 and 127.0.0.3");
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

    private static Regex ForwardingOn(IPAddress node) => new($@"Forwarding tcp://{Regex.Escape(node.ToString())}:(?<port>\d+) ->");

    [GeneratedRegex("gave the session TCP port")]
    private static partial Regex PortDiffersLine();
}
