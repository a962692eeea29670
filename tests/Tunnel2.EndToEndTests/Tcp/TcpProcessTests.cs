using System.Globalization;
using System.Net.Sockets;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// The TCP tunnel's limits against the built executables, each a process of its own: the cap on open connections and
/// the idle timeout, and a crowd of 1,000 idle connections that costs each process a bounded amount of memory while new
/// connections and HTTP requests still pass.
/// </summary>
public sealed partial class TcpProcessTests
{
    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task The_server_process_caps_a_sessions_connections_and_closes_idle_ones(string engine)
    {
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-proc-cap-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), TcpTunnel.ServerEngine(engine), "--ProxyEntry:SessionDefaults:MaxTcpConnections=3", "--TunnelServer:Tcp:IdleTimeout=00:00:02"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);

        Socket[] open = await Task.WhenAll(Enumerable.Range(0, 3).Select(_ => EchoingAsync(port)));
        bool fourthCut = await TcpTunnel.IsCutAsync(port, [9], TimeSpan.FromSeconds(15));
        Assert.True(fourthCut, "the fourth connection should be cut");
        Assert.Equal(3, target.AcceptedConnections);

        foreach (Socket socket in open)
        {
            Assert.True(await TcpTunnel.EndsWithinAsync(socket, TimeSpan.FromSeconds(20)), "an idle connection should be closed");
            socket.Dispose();
        }

        await stack.Server.WaitForOutputAsync(IdleLine(), TimeSpan.FromSeconds(10));
        Assert.False(stack.Server.HasExited || stack.Client.HasExited, "a tunnel process exited during the test");
        TcpTunnel.AssertNoLoopFault(stack.Server);
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_thousand_idle_connections_cost_each_process_little_and_new_ones_still_pass(string engine)
    {
        const int Idle = 1000;
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-proc-idle-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), TcpTunnel.ServerEngine(engine), "--ProxyEntry:SessionDefaults:MaxTcpConnections=2000"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);
        await using MemorySampler serverMemory = MemorySampler.Start(stack.Server.Id);
        await using MemorySampler clientMemory = MemorySampler.Start(stack.Client.Id);

        var idle = new List<Socket>(Idle);
        for (int i = 0; i < Idle; i += 50)
        {
            idle.AddRange(await Task.WhenAll(Enumerable.Range(0, 50).Select(_ => EchoingAsync(port))));
        }

        Socket[] probes = await Task.WhenAll(Enumerable.Range(0, 20).Select(_ => EchoingAsync(port)));
        using HttpClient http = CallerHttp.Create();
        using HttpResponseMessage answer = await http.GetAsync(stack.SessionUrl("/loadtest/ping"));
        Assert.Equal(System.Net.HttpStatusCode.OK, answer.StatusCode);
        foreach (Socket socket in idle)
        {
            await socket.SendAsync(new byte[] { 7 });
        }

        foreach (Socket socket in idle)
        {
            Assert.Equal(new byte[] { 7 }, await TcpTunnel.ReadAsync(socket, 1).WaitAsync(TimeSpan.FromSeconds(30)));
        }

        long server = serverMemory.PeakGrowthBytes / 1024 / 1024, client = clientMemory.PeakGrowthBytes / 1024 / 1024;
        TestContext.Current.TestOutputHelper?.WriteLine($"{Idle} idle TCP connections: server grew {server} MiB, client {client} MiB");
        Assert.True(server <= 48, $"the server grew by {server} MiB for {Idle} idle TCP connections");
        Assert.True(client <= 48, $"the client grew by {client} MiB for {Idle} idle TCP connections");
        Assert.Equal(Idle + probes.Length, target.AcceptedConnections);
        foreach (Socket socket in idle.Concat(probes))
        {
            socket.Dispose();
        }

        Assert.False(stack.Server.HasExited || stack.Client.HasExited, "a tunnel process exited during the test");
        TcpTunnel.AssertNoLoopFault(stack.Server);
    }

    /// <summary>The session's TCP port, from the client process's "Forwarding tcp://host:port -> …" line.</summary>
    private static async Task<int> PortAsync(ProcessStack stack)
    {
        Match forwarding = await stack.Client.WaitForOutputAsync(ForwardingLine(), TimeSpan.FromSeconds(15));
        return int.Parse(forwarding.Groups["port"].Value, CultureInfo.InvariantCulture);
    }

    private static async Task<Socket> EchoingAsync(int port)
    {
        Socket socket = await TcpTunnel.ConnectAsync(port);
        await socket.SendAsync(new byte[] { 42 });
        Assert.Equal(new byte[] { 42 }, await TcpTunnel.ReadAsync(socket, 1).WaitAsync(TimeSpan.FromSeconds(30)));
        return socket;
    }

    [GeneratedRegex(@"Forwarding tcp://\S+:(?<port>\d+) ->")]
    private static partial Regex ForwardingLine();

    [GeneratedRegex(@"idle for 2000 ms: closed")]
    private static partial Regex IdleLine();
}
