using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// Several clients of one TCP session, each a process of its own beside the server's: least requests spreads the open
/// connections, a client whose target refuses is ejected while callers get through the other, a refused caller is tried
/// on the next client (also one that spoke first), and a caller every client refuses gets a clean close.
/// </summary>
public sealed partial class TcpBalancingProcessTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Least_requests_sends_each_new_connection_to_the_client_with_fewer_open()
    {
        await using ScriptedTcpTarget a = Tagged((byte)'A'), b = Tagged((byte)'B');
        string session = Session("least");
        await using TunnelProcess server = StartServer("--TunnelServer:Tcp:Strategy=LeastRequests");
        (_, Uri tunnel) = await server.WaitForServerUrlsAsync();
        await using TunnelProcess clientA = StartClient("client-a", tunnel, session, a.Address);
        await using TunnelProcess clientB = StartClient("client-b", tunnel, session, b.Address);
        int port = await PortAsync(clientA);
        await WaitForMembersAsync(server, session, 2);

        var open = new List<(Socket Socket, byte Tag)>();
        for (int i = 0; i < 8; i++)
        {
            open.Add(await ConnectTaggedAsync(port)); // one at a time: each pick sees the counts the last one left
        }

        Assert.Equal((4, 4), (open.Count(c => c.Tag == 'A'), open.Count(c => c.Tag == 'B')));

        // A's four close; B keeps four open. Round robin would now give A half the new ones; least requests all.
        foreach ((Socket socket, _) in open.Where(c => c.Tag == 'A'))
        {
            socket.Dispose();
        }

        await Eventually.WaitUntilAsync(() => EndedLines().Count(server.Output) >= 4, "A's four connections ended at the server");
        byte[] next = new byte[4];
        for (int i = 0; i < next.Length; i++)
        {
            (Socket socket, byte tag) = await ConnectTaggedAsync(port);
            open.Add((socket, tag));
            next[i] = tag;
        }

        Assert.Equal("AAAA", Encoding.ASCII.GetString(next));
        foreach ((Socket socket, _) in open)
        {
            socket.Dispose();
        }
    }

    [Fact]
    public async Task A_client_whose_target_refuses_is_ejected_and_every_caller_gets_through_the_other()
    {
        using Socket refusing = ClosedPort(out string refusingAddress);
        await using ScriptedTcpTarget good = Tagged((byte)'G');
        string session = Session("eject");
        await using TunnelProcess server = StartServer("--TunnelServer:Tcp:EjectAfter=1", "--TunnelServer:Tcp:EjectionBackoff=00:01:00",
            "--TunnelServer:Tcp:MaxEjectionBackoff=00:01:00");
        (_, Uri tunnel) = await server.WaitForServerUrlsAsync();
        await using TunnelProcess bad = StartClient("client-refusing", tunnel, session, refusingAddress);
        await using TunnelProcess ok = StartClient("client-good", tunnel, session, good.Address);
        int port = await PortAsync(ok);
        await WaitForMembersAsync(server, session, 2);

        for (int i = 0; i < 10; i++)
        {
            (Socket socket, byte tag) = await ConnectTaggedAsync(port);
            using (socket)
            {
                Assert.Equal((byte)'G', tag);
            }
        }

        // Round robin sends the first or second caller to the refusing client; after that one refusal it is passed
        // over for the whole minute, so it saw exactly one stream.
        await server.WaitForOutputAsync(EjectedLine(), Wait);
        await bad.WaitForOutputAsync(UnreachableLines(), Wait); // written off the refusing client's loop: it may come later
        Assert.Equal(1, UnreachableLines().Count(bad.Output));
        Assert.Equal(1, RefusedLines().Count(server.Output));
        Assert.Equal(10, good.AcceptedConnections);
    }

    [Fact]
    public async Task A_caller_that_speaks_first_is_tried_on_the_next_client_with_its_bytes_when_a_target_refuses()
    {
        using Socket refusing = ClosedPort(out string refusingAddress);
        await using ScriptedTcpTarget echo = ScriptedTcpTarget.Echo();
        string session = Session("redispatch");
        await using TunnelProcess server = StartServer("--TunnelServer:Tcp:EjectAfter=0"); // never ejected: every other caller meets it
        (_, Uri tunnel) = await server.WaitForServerUrlsAsync();
        await using TunnelProcess bad = StartClient("client-refusing", tunnel, session, refusingAddress);
        await using TunnelProcess ok = StartClient("client-echo", tunnel, session, echo.Address);
        int port = await PortAsync(ok);
        await WaitForMembersAsync(server, session, 2);

        for (int i = 0; i < 10; i++)
        {
            using Socket caller = await TcpTunnel.ConnectAsync(port);
            byte[] hello = Encoding.ASCII.GetBytes($"hello {i}, sent before the target answered");
            await caller.SendAsync(hello);
            Assert.Equal(hello, await TcpTunnel.ReadAsync(caller, hello.Length).WaitAsync(Wait));
        }

        // Round robin, never ejected: once the refusing client's turn comes, every caller meets it first.
        int refused = RefusedLines().Count(server.Output);
        Assert.InRange(refused, 5, 10);
        // The refusing client writes its line off its loop, after the reset that the server counts: it may come later.
        await Eventually.WaitUntilAsync(() => UnreachableLines().Count(bad.Output) == refused, $"the refusing client logs each of the {refused} refusals");
        Assert.Equal(10, echo.AcceptedConnections);
        Assert.DoesNotMatch(EjectedLine(), server.Output);
    }

    [Fact]
    public async Task A_caller_every_client_refuses_gets_a_clean_close_and_a_log_line()
    {
        using Socket refusing = ClosedPort(out string refusingAddress);
        string session = Session("allrefuse");
        await using TunnelProcess server = StartServer();
        (_, Uri tunnel) = await server.WaitForServerUrlsAsync();
        await using TunnelProcess bad = StartClient("client-refusing", tunnel, session, refusingAddress);
        int port = await PortAsync(bad);
        await WaitForMembersAsync(server, session, 1);

        using Socket caller = await TcpTunnel.ConnectAsync(port);
        int read = await caller.ReceiveAsync(new byte[16]).WaitAsync(Wait); // a reset would throw here

        Assert.Equal(0, read);
        await server.WaitForOutputAsync(AllRefusedLine(), Wait);
    }

    internal static string Session(string what) => $"tcp-bal-{what}-{Guid.NewGuid():N}"[..30];

    internal static TunnelProcess StartServer(params string[] args) =>
        TunnelProcess.StartServer("server", ["--public-url", "http://127.0.0.1:0", "--tunnel-url", "http://127.0.0.1:0", "--token", TunnelStack.Token,
            TcpTunnel.PortRange(), .. args]);

    internal static TunnelProcess StartClient(string name, Uri tunnel, string session, string target, params string[] extraArgs) =>
        TunnelProcess.StartClient(name,
            ["--server", tunnel.ToString().TrimEnd('/'), "--session", session, "--token", TunnelStack.Token, "--tcp", target, .. extraArgs]);

    /// <summary>A target that says its tag first (a server-first protocol, like SSH or SMTP), then echoes.</summary>
    internal static ScriptedTcpTarget Tagged(byte tag) => new(async socket =>
    {
        await socket.SendAsync(new[] { tag });
        byte[] buffer = new byte[4096];
        int read;
        while ((read = await socket.ReceiveAsync(buffer)) > 0)
        {
            await ScriptedTcpTarget.SendAllAsync(socket, buffer.AsMemory(0, read));
        }

        socket.Shutdown(SocketShutdown.Send);
    });

    internal static async Task<(Socket Socket, byte Tag)> ConnectTaggedAsync(int port, IPAddress? address = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(address ?? IPAddress.Loopback, port));
        byte[] tag = await TcpTunnel.ReadAsync(socket, 1).WaitAsync(Wait);
        Assert.True(tag.Length == 1, "the target's tag should come through the tunnel");
        return (socket, tag[0]);
    }

    /// <summary>A loopback port bound but not listening: a client dialling it is refused at once, and no one else takes it.</summary>
    internal static Socket ClosedPort(out string address)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        address = $"127.0.0.1:{((IPEndPoint)socket.LocalEndPoint!).Port}";
        return socket;
    }

    internal static async Task<int> PortAsync(TunnelProcess client)
    {
        Match forwarding = await client.WaitForOutputAsync(ForwardingLine(), Wait);
        return int.Parse(forwarding.Groups["port"].Value, CultureInfo.InvariantCulture);
    }

    /// <summary>Every client is a member of the port once the server logged its uplink (after it joined the port).</summary>
    internal static Task WaitForMembersAsync(TunnelProcess server, string session, int clients) =>
        Eventually.WaitUntilAsync(() => server.Output.Split($"Uplink connected: session {session}").Length - 1 >= clients,
            $"{clients} clients of {session} connected", Wait);

    [GeneratedRegex(@"Forwarding tcp://\S+:(?<port>\d+) ->")]
    internal static partial Regex ForwardingLine();

    [GeneratedRegex(@"TCP connection from \S+ of session \S+ \(stream \d+\) ended")]
    private static partial Regex EndedLines();

    [GeneratedRegex(@"TCP client \S+ of session \S+ ejected for 60000 ms")]
    private static partial Regex EjectedLine();

    [GeneratedRegex(@"its target refused the connection \(client [^,]+, stream \d+\); nothing reached a target")]
    private static partial Regex RefusedLines();

    [GeneratedRegex(@"TCP stream \d+: target \S+ unreachable")]
    private static partial Regex UnreachableLines();

    [GeneratedRegex(@"every client's target refused it \(1 tried\)")]
    private static partial Regex AllRefusedLine();
}
