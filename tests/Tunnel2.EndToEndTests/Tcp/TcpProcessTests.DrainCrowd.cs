using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// The drain of a TunnelServer process with a crowd of TCP connections open, not one: a thousand callers keep being
/// served after SIGTERM while new ones are refused, the server exits as soon as they close, and a crowd still open at
/// the deadline is cut, counted and logged, with the server's own memory bounded.
/// </summary>
public sealed partial class TcpProcessTests
{
    private const int Crowd = 1000;

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_server_stopped_with_SIGTERM_serves_a_crowd_of_a_thousand_TCP_connections_until_their_callers_close_them(string engine)
    {
        TimeSpan drainTimeout = TimeSpan.FromSeconds(20);
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-drain-crowd-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), TcpTunnel.ServerEngine(engine), "--ProxyEntry:SessionDefaults:MaxTcpConnections=2000", "--drain-timeout", "00:00:20"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);
        List<Socket> crowd = await OpenCrowdAsync(port);
        try
        {
            var sinceSigterm = Stopwatch.StartNew();
            stack.Server.Terminate();

            await stack.Server.WaitForOutputAsync(CrowdDrainingLine(), TimeSpan.FromSeconds(15));
            await AssertRefusedAsync(port);
            TimeSpan refusedAt = sinceSigterm.Elapsed;
            await EchoEachAsync(crowd, 5);
            await AssertRefusedAsync(port); // still refused later in the drain, with the crowd served beside
            Assert.False(stack.Server.HasExited, "the server should wait for the crowd's open TCP connections");

            TimeSpan closingAt = sinceSigterm.Elapsed;
            bool[] clean = await Task.WhenAll(crowd.Select(ClosesCleanlyAsync));
            Assert.Equal(0, clean.Count(closed => !closed));
            Assert.Equal(0, await stack.Server.WaitForExitAsync(TimeSpan.FromSeconds(10)));
            TimeSpan exitedAt = sinceSigterm.Elapsed;

            TestContext.Current.TestOutputHelper?.WriteLine(
                $"{Crowd} TCP connections: refused new callers {refusedAt.TotalMilliseconds:F0} ms after SIGTERM, callers closed from " +
                $"{closingAt.TotalMilliseconds:F0} ms, server exited at {exitedAt.TotalMilliseconds:F0} ms (drain timeout {drainTimeout.TotalMilliseconds:F0} ms)");
            Assert.True(exitedAt < drainTimeout, $"the server should exit before its drain deadline once the callers closed, not at {exitedAt}");
            Assert.Contains("Drained: every public request and TCP connection finished", stack.Server.Output, StringComparison.Ordinal);
            Assert.Equal(Crowd, ClosedByBothSidesLine().Count(stack.Server.Output));
            Assert.Equal(Crowd, target.AcceptedConnections);
        }
        finally
        {
            crowd.ForEach(socket => socket.Dispose());
        }
        TcpTunnel.AssertNoLoopFault(stack.Server);
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_crowd_of_TCP_connections_still_open_at_the_drain_deadline_is_cut_and_counted_in_the_log(string engine)
    {
        TimeSpan drainTimeout = TimeSpan.FromSeconds(3);
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"tcp-drain-crowd-cut-{Guid.NewGuid():N}"[..30];
        await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
        {
            ServerArgs = [TcpTunnel.PortRange(), TcpTunnel.ServerEngine(engine), "--ProxyEntry:SessionDefaults:MaxTcpConnections=2000", "--drain-timeout", "00:00:03"],
            ClientArgs = ["--tcp", target.Address],
        });
        int port = await PortAsync(stack);
        await using MemorySampler serverMemory = MemorySampler.Start(stack.Server.Id);
        List<Socket> crowd = await OpenCrowdAsync(port);
        try
        {
            var sinceSigterm = Stopwatch.StartNew();
            stack.Server.Terminate();

            await stack.Server.WaitForOutputAsync(CrowdDrainingLine(), TimeSpan.FromSeconds(15));
            TimeSpan[] cutAt = await Task.WhenAll(crowd.Select(socket => CutAtAsync(socket, sinceSigterm)));
            Assert.Equal(0, await stack.Server.WaitForExitAsync(TimeSpan.FromSeconds(20)));

            long grew = serverMemory.PeakGrowthBytes / 1024 / 1024;
            TestContext.Current.TestOutputHelper?.WriteLine(
                $"{Crowd} TCP connections cut between {cutAt.Min().TotalMilliseconds:F0} and {cutAt.Max().TotalMilliseconds:F0} ms " +
                $"after SIGTERM (drain timeout {drainTimeout.TotalMilliseconds:F0} ms); the server grew {grew} MiB");
            Assert.True(cutAt.Min() >= drainTimeout, $"a connection was cut {cutAt.Min()} after SIGTERM, before the drain deadline");
            // After the deadline the uplinks still get their short close grace (GracefulShutdown.CloseGrace) before they close.
            Assert.True(cutAt.Max() <= drainTimeout + TimeSpan.FromSeconds(10), $"a connection was still open {cutAt.Max()} after SIGTERM");
            Assert.Matches(CrowdCutLine(), stack.Server.Output);
            // Per connection the runtime's sockets hold a 16 KiB read buffer, the stream's inbound pipe and its ~15 KiB of
            // state, and async socket contexts: ~41 MiB for the crowd before the GC's slack (measured 24-50 MiB). The loop
            // holds no buffer for an idle connection (measured 13-16 MiB), so its bound is tighter than the old single 48.
            long bound = engine == "Loop" ? 32 : 64;
            Assert.True(grew <= bound, $"the server grew by {grew} MiB for {Crowd} TCP connections and their drain ({engine} engine, bound {bound} MiB)");
            Assert.Equal(Crowd, target.AcceptedConnections);
        }
        finally
        {
            crowd.ForEach(socket => socket.Dispose());
        }
        TcpTunnel.AssertNoLoopFault(stack.Server);
    }

    /// <summary>A crowd of connections, each seen to echo once; opened 50 at a time, as many callers start on a busy machine.</summary>
    private static async Task<List<Socket>> OpenCrowdAsync(int port)
    {
        var crowd = new List<Socket>(Crowd);
        for (int i = 0; i < Crowd; i += 50)
        {
            crowd.AddRange(await Task.WhenAll(Enumerable.Range(0, 50).Select(_ => EchoingAsync(port))));
        }

        return crowd;
    }

    /// <summary>New callers find the port closed, every one of them, with no retry and no wait.</summary>
    private static async Task AssertRefusedAsync(int port)
    {
        for (int i = 0; i < 20; i++)
        {
            SocketException refused = await Assert.ThrowsAsync<SocketException>(() => TcpTunnel.ConnectAsync(port));
            Assert.Equal(SocketError.ConnectionRefused, refused.SocketErrorCode);
        }
    }

    private static async Task EchoEachAsync(List<Socket> crowd, byte value)
    {
        foreach (Socket socket in crowd)
        {
            await socket.SendAsync(new[] { value });
        }

        foreach (Socket socket in crowd)
        {
            Assert.Equal(new[] { value }, await TcpTunnel.ReadAsync(socket, 1).WaitAsync(TimeSpan.FromSeconds(30)));
        }
    }

    /// <summary>The caller sends its FIN and gets the target's FIN back, with no byte more and no reset.</summary>
    private static async Task<bool> ClosesCleanlyAsync(Socket socket)
    {
        socket.Shutdown(SocketShutdown.Send);
        var reset = new StrongBox<bool>();
        byte[] rest = await ScriptedTcpTarget.ReadToEndAsync(socket, reset).WaitAsync(TimeSpan.FromSeconds(30));
        return !reset.Value && rest.Length == 0;
    }

    /// <summary>When the connection was cut, measured from SIGTERM; fails the test when it ends in time but with a FIN, or not in time.</summary>
    private static async Task<TimeSpan> CutAtAsync(Socket socket, Stopwatch sinceSigterm)
    {
        var reset = new StrongBox<bool>();
        await ScriptedTcpTarget.ReadToEndAsync(socket, reset).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.True(reset.Value, "a connection open at the drain deadline should be cut with a reset, not closed as if it had ended");
        return sinceSigterm.Elapsed;
    }

    [GeneratedRegex(@"TCP ports closed to new callers; .* for 0 requests and 1000 TCP connections in flight")]
    private static partial Regex CrowdDrainingLine();

    [GeneratedRegex(@"Drain deadline passed with 0 public requests \(0 of them .*\) and 1000 TCP connections still open")]
    private static partial Regex CrowdCutLine();

    [GeneratedRegex(@"TCP connection from \S+ of session \S+ \(stream \d+\) ended: closed by both sides;")]
    private static partial Regex ClosedByBothSidesLine();
}
