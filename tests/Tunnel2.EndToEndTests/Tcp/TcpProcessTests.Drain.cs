using System.Net.Sockets;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// A TunnelServer process stopped with SIGTERM drains its TCP ports as it drains HTTP: the port closes to new callers
/// (so a balancer in front sends them to another node), the connections already open go on until they end or the drain
/// deadline passes.
/// </summary>
public sealed partial class TcpProcessTests
{
    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_server_stopped_with_SIGTERM_refuses_new_TCP_callers_and_waits_for_the_open_connection(string engine)
    {
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-drain-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), TcpTunnel.ServerEngine(engine), "--drain-timeout", "00:00:30"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);
        using Socket open = await EchoingAsync(port);

        stack.Server.Terminate();

        await stack.Server.WaitForOutputAsync(DrainingLine(), TimeSpan.FromSeconds(15));
        SocketException refused = await Assert.ThrowsAsync<SocketException>(() => TcpTunnel.ConnectAsync(port));
        Assert.Equal(SocketError.ConnectionRefused, refused.SocketErrorCode);
        await open.SendAsync(new byte[] { 5 });
        Assert.Equal(new byte[] { 5 }, await TcpTunnel.ReadAsync(open, 1).WaitAsync(TimeSpan.FromSeconds(15)));
        Assert.False(stack.Server.HasExited, "the server should wait for the open TCP connection");

        open.Shutdown(SocketShutdown.Both);
        open.Close();

        Assert.Equal(0, await stack.Server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
        Assert.Contains("Drained: every public request and TCP connection finished", stack.Server.Output, StringComparison.Ordinal);
        Assert.Equal(1, target.AcceptedConnections);
        TcpTunnel.AssertNoLoopFault(stack.Server);
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_TCP_connection_still_open_at_the_drain_deadline_is_cut_and_logged(string engine)
    {
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-drain-cut-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), TcpTunnel.ServerEngine(engine), "--drain-timeout", "00:00:02"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);
        using Socket open = await EchoingAsync(port);

        stack.Server.Terminate();

        Assert.True(await TcpTunnel.EndsWithinAsync(open, TimeSpan.FromSeconds(20)), "the connection should be cut at the deadline");
        Assert.Equal(0, await stack.Server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
        Assert.Matches(CutLine(), stack.Server.Output);
        TcpTunnel.AssertNoLoopFault(stack.Server);
    }

    [GeneratedRegex(@"TCP ports closed to new callers; .* for 0 requests and 1 TCP connections in flight")]
    private static partial Regex DrainingLine();

    [GeneratedRegex(@"Drain deadline passed with 0 public requests \(0 of them .*\) and 1 TCP connections still open")]
    private static partial Regex CutLine();
}
