using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// What guards a session's TCP port (docs/tcp.md): its visitor address rules before anything reaches the client, its cap
/// on open connections, the idle timeout; what the client tells its target (PROXY protocol v2); and what a server without
/// TCP ports tells a client that asks for one.
/// </summary>
public sealed class TcpLimitsTests
{
    private static string NewSession(string name) => $"tcp-{name}-{Guid.NewGuid():N}"[..40];

    [Fact]
    public async Task A_caller_outside_the_allow_list_is_refused_before_anything_reaches_the_client()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync("--TunnelServer:ClientVisitorPolicies=true");
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = NewSession("allow");
        int port = await TcpTunnel.StartClientAsync(stack, session, target, "--cidr-allow", "10.0.0.0/8");

        bool cut = await TcpTunnel.IsCutAsync(port, [1, 2, 3], TimeSpan.FromSeconds(15));

        Assert.True(cut, "a caller from 127.0.0.1 should be cut");
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "address-denied"), "the refusal is logged");
        Assert.Equal(0, target.AcceptedConnections);
        Assert.All(stack.Registry.GetUplinks(session), uplink => Assert.Equal(0, uplink.ActiveStreamCount));
    }

    [Fact]
    public async Task Connections_beyond_the_sessions_cap_are_refused_and_a_place_freed_takes_the_next()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync("--ProxyEntry:SessionDefaults:MaxTcpConnections=2");
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = NewSession("cap");
        int port = await TcpTunnel.StartClientAsync(stack, session, target);
        using Socket first = await EchoingAsync(port);
        using Socket second = await EchoingAsync(port);

        bool cut = await TcpTunnel.IsCutAsync(port, [7], TimeSpan.FromSeconds(15));

        Assert.True(cut, "the third connection should be cut");
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "too many connections"), "the refusal is logged");
        Assert.Equal(2, target.AcceptedConnections);

        first.Shutdown(SocketShutdown.Send);
        Assert.True(await TcpTunnel.EndsWithinAsync(first, TimeSpan.FromSeconds(15)));
        await Eventually.WaitUntilAsync(() => TcpTunnel.OpenConnections(stack, session) == 1, "the first connection's place is free");
        using Socket fourth = await EchoingAsync(port);
        Assert.Equal(3, target.AcceptedConnections);
    }

    [Fact]
    public async Task Refused_and_ended_connections_are_counted_in_the_servers_metrics()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync("--ProxyEntry:SessionDefaults:MaxTcpConnections=1", "--admin-url", "http://127.0.0.1:0");
        Uri admin = stack.Server.Services.GetRequiredService<Tunnel2.TunnelServer.Hosting.ServerEndpoints>().AdminUrl!;
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = NewSession("metrics");
        int port = await TcpTunnel.StartClientAsync(stack, session, target);
        using var http = new HttpClient();

        using (Socket first = await EchoingAsync(port))
        {
            Assert.Equal(1, PrometheusText.Sum(await http.GetStringAsync(new Uri(admin, "/metrics")), "tunnel2_server_tcp_connections"));
            Assert.True(await TcpTunnel.IsCutAsync(port, [1], TimeSpan.FromSeconds(15)));
            first.Shutdown(SocketShutdown.Send);
            Assert.True(await TcpTunnel.EndsWithinAsync(first, TimeSpan.FromSeconds(15)));
        }

        await Eventually.WaitUntilAsync(async () => PrometheusText.Sum(await http.GetStringAsync(new Uri(admin, "/metrics")),
            "tunnel2_server_tcp_connections_ended_total", "cause=\"closed\"") == 1, "the clean end is counted");
        string metrics = await http.GetStringAsync(new Uri(admin, "/metrics"));
        Assert.Equal(1, PrometheusText.Sum(metrics, "tunnel2_server_tcp_connections_refused_total", "reason=\"too-many-connections\""));
        Assert.Equal(0, PrometheusText.Sum(metrics, "tunnel2_server_tcp_connections"));
    }

    [Fact]
    public async Task A_connection_idle_beyond_the_timeout_is_closed_both_ways()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync("--TunnelServer:Tcp:IdleTimeout=00:00:01");
        var targetEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var target = new ScriptedTcpTarget(async socket =>
        {
            byte[] buffer = new byte[1];
            try
            {
                while (await socket.ReceiveAsync(buffer) > 0)
                {
                    await socket.SendAsync(buffer);
                }
            }
            finally
            {
                targetEnded.TrySetResult();
            }
        });
        string session = NewSession("idle");
        int port = await TcpTunnel.StartClientAsync(stack, session, target);

        using Socket caller = await EchoingAsync(port);
        var quiet = Stopwatch.StartNew();

        Assert.True(await TcpTunnel.EndsWithinAsync(caller, TimeSpan.FromSeconds(15)), "an idle connection should be closed");
        Assert.True(quiet.Elapsed >= TimeSpan.FromSeconds(0.9), $"closed after {quiet.Elapsed}, before the idle timeout");
        await targetEnded.Task.WaitAsync(TimeSpan.FromSeconds(15));
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "idle for 1000 ms"), "the timeout is logged");
    }

    [Fact]
    public async Task With_proxy_protocol_v2_the_target_reads_the_caller_and_the_public_port_first()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync();
        var header = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        var payload = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var target = new ScriptedTcpTarget(async socket =>
        {
            header.TrySetResult(await TcpTunnel.ReadAsync(socket, 28));
            payload.TrySetResult(await ScriptedTcpTarget.ReadToEndAsync(socket));
        });
        string session = NewSession("proxy");
        int port = await TcpTunnel.StartClientAsync(stack, session, target, "--tcp-proxy-protocol", "v2");

        using Socket caller = await TcpTunnel.ConnectAsync(port);
        await caller.SendAsync("PING\r\n"u8.ToArray());
        caller.Shutdown(SocketShutdown.Send);

        byte[] bytes = await header.Task.WaitAsync(TimeSpan.FromSeconds(15));
        Assert.Equal(new byte[] { 0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A }, bytes[..12]);
        Assert.Equal(0x21, bytes[12]); // version 2, PROXY
        Assert.Equal(0x11, bytes[13]); // TCP over IPv4
        Assert.Equal(12, BinaryPrimitives.ReadUInt16BigEndian(bytes.AsSpan(14)));
        Assert.Equal(IPAddress.Loopback, new IPAddress(bytes.AsSpan(16, 4)));
        Assert.Equal(((IPEndPoint)caller.LocalEndPoint!).Port, BinaryPrimitives.ReadUInt16BigEndian(bytes.AsSpan(24)));
        Assert.Equal(port, BinaryPrimitives.ReadUInt16BigEndian(bytes.AsSpan(26)));
        Assert.Equal("PING\r\n"u8.ToArray(), await payload.Task.WaitAsync(TimeSpan.FromSeconds(15)));
    }

    [Fact]
    public async Task A_server_without_tcp_ports_refuses_a_tcp_login_and_the_client_stops_with_exit_code_3()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync(TcpTunnel.TcpLogs); // no PortRange: TCP is off
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = NewSession("off");

        TunnelClientHandle client = stack.StartClientWithoutWaiting(session, backend: null, token: null, maxConcurrency: 100, "--tcp", target.Address);
        await client.StartAsync();

        await Eventually.WaitUntilAsync(() => client.Status.ExitCode == 3, "the client stops: retrying cannot help");
        Assert.Empty(stack.Registry.GetUplinks(session));
        Assert.True(TcpTunnel.Logged(session, "gives session"), "the server logs the refusal");
    }

    [Fact]
    public async Task A_client_that_reconnects_gets_its_sessions_port_again()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync();
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = NewSession("again");
        int port = await TcpTunnel.StartClientAsync(stack, session, target);
        await using (TunnelClientHandle other = await stack.StartClientAsync(session, backend: null, token: null, maxConcurrency: 100, "--tcp", target.Address))
        {
            Assert.Equal(port, TcpTunnel.PortOf(stack, session)); // a second client of the session shares the port
        }

        IReadOnlyList<Tunnel2.Protocol.Multiplexing.Uplink> dropped = stack.Registry.GetUplinks(session);
        foreach (Tunnel2.Protocol.Multiplexing.Uplink uplink in dropped)
        {
            uplink.Close("test: the client's connection dropped");
        }

        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(session) is [var back] && !dropped.Contains(back), "the client is back");
        Assert.Equal(port, TcpTunnel.PortOf(stack, session));
        using Socket caller = await EchoingAsync(port);
    }

    /// <summary>A connection to the session's port that has carried one byte there and back.</summary>
    private static async Task<Socket> EchoingAsync(int port)
    {
        Socket socket = await TcpTunnel.ConnectAsync(port);
        await socket.SendAsync(new byte[] { 42 });
        Assert.Equal(new byte[] { 42 }, await TcpTunnel.ReadAsync(socket, 1).WaitAsync(TimeSpan.FromSeconds(15)));
        return socket;
    }
}
