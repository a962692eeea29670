using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Text;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// Raw TCP through the tunnel (docs/tcp.md): a client with <c>--tcp</c> gets a public TCP port for its session, and each
/// connection to it reaches the client's target as one stream, byte for byte, with half-close both ways and every kind
/// of ending passed on.
/// </summary>
public sealed class TcpRelayTests
{
    private static string NewSession(string name) => $"tcp-{name}-{Guid.NewGuid():N}"[..40];

    /// <summary>Both engines of the client's TCP targets (issue 52): the event loop (the default) and the runtime's sockets; a test with one engine runs the server's callers on the same kind.</summary>
    private static string Engine(string engine) => $"--TunnelClient:Tcp:Engine={engine}";

    /// <summary>The client's uplink on the same engine as its TCP targets: Loop puts both on the client's one event loop.</summary>
    private static string UplinkEngine(string engine) => $"--TunnelClient:Uplink:Engine={engine}";

    /// <param name="engine">The client's engine.</param>
    /// <param name="serverEngine">The server's engine (its callers), each with each.</param>
    [Theory]
    [InlineData("upgrade", "Loop", "Loop")]
    [InlineData("upgrade", "Sockets", "Sockets")]
    [InlineData("upgrade", "Loop", "Sockets")]
    [InlineData("upgrade", "Sockets", "Loop")]
    [InlineData("websocket", "Loop", "Loop")]
    public async Task Four_MiB_echo_byte_exact_and_the_callers_FIN_comes_back_as_the_targets(string transport, string engine, string serverEngine)
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync(TcpTunnel.ServerEngine(serverEngine));
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = NewSession("echo");
        int port = await TcpTunnel.StartClientAsync(stack, session, target, "--transport", transport, Engine(engine), UplinkEngine(engine));
        byte[] sent = RandomNumberGenerator.GetBytes(4 * 1024 * 1024);

        using Socket caller = await TcpTunnel.ConnectAsync(port);
        Task<byte[]> echoed = ScriptedTcpTarget.ReadToEndAsync(caller);
        await ScriptedTcpTarget.SendAllAsync(caller, sent);
        caller.Shutdown(SocketShutdown.Send); // the caller's half-close: the echo target answers with its own FIN

        byte[] received = await echoed.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.Equal(sent.Length, received.Length);
        Assert.True(sent.AsSpan().SequenceEqual(received), "the echoed bytes differ from those sent");
        Assert.Equal(1, target.AcceptedConnections);
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "closed by both sides"), "the server logs the clean end");
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task The_target_half_closes_first_and_the_caller_still_sends_after_that(string engine)
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync(TcpTunnel.ServerEngine(engine), UplinkEngine(engine));
        var afterFin = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var target = new ScriptedTcpTarget(async socket =>
        {
            await ScriptedTcpTarget.SendAllAsync(socket, "greeting\n"u8.ToArray());
            socket.Shutdown(SocketShutdown.Send); // the target is done talking, not listening
            afterFin.TrySetResult(await ScriptedTcpTarget.ReadToEndAsync(socket));
        });
        string session = NewSession("halfclose");
        int port = await TcpTunnel.StartClientAsync(stack, session, target, Engine(engine), UplinkEngine(engine));

        using Socket caller = await TcpTunnel.ConnectAsync(port);
        byte[] greeting = await ScriptedTcpTarget.ReadToEndAsync(caller).WaitAsync(TimeSpan.FromSeconds(15)); // ends at the target's FIN
        await ScriptedTcpTarget.SendAllAsync(caller, "still here\n"u8.ToArray());
        caller.Shutdown(SocketShutdown.Send);

        Assert.Equal("greeting\n", Encoding.ASCII.GetString(greeting));
        Assert.Equal("still here\n", Encoding.ASCII.GetString(await afterFin.Task.WaitAsync(TimeSpan.FromSeconds(15))));
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_target_dying_mid_stream_cuts_the_caller_with_a_log_line(string engine)
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync(TcpTunnel.ServerEngine(engine), UplinkEngine(engine));
        await using var target = new ScriptedTcpTarget(async socket =>
        {
            await ScriptedTcpTarget.SendAllAsync(socket, new byte[64 * 1024]);
            await socket.ReceiveAsync(new byte[1]); // the caller's go-ahead
            socket.LingerState = new LingerOption(true, 0);
            socket.Close(); // a crash: a reset, not a FIN
        });
        string session = NewSession("dies");
        int port = await TcpTunnel.StartClientAsync(stack, session, target, Engine(engine), UplinkEngine(engine));

        using Socket caller = await TcpTunnel.ConnectAsync(port);
        Assert.Equal(64 * 1024, (await TcpTunnel.ReadAsync(caller, 64 * 1024)).Length);
        await caller.SendAsync(new byte[] { 1 });
        var reset = new StrongBox<bool>();
        await ScriptedTcpTarget.ReadToEndAsync(caller, reset).WaitAsync(TimeSpan.FromSeconds(15));

        Assert.True(reset.Value, "a target that died should reach the caller as a reset, not as a clean end");
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "its target broke the connection"), "the server logs why the connection ended");
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_caller_vanishing_closes_the_target_connection(string engine)
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync(TcpTunnel.ServerEngine(engine), UplinkEngine(engine));
        var targetSaw = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var target = new ScriptedTcpTarget(async socket => targetSaw.TrySetResult((await ScriptedTcpTarget.ReadToEndAsync(socket)).Length));
        string session = NewSession("vanish");
        int port = await TcpTunnel.StartClientAsync(stack, session, target, Engine(engine), UplinkEngine(engine));

        Socket caller = await TcpTunnel.ConnectAsync(port);
        await caller.SendAsync(new byte[1000]);
        await Eventually.WaitUntilAsync(() => target.AcceptedConnections == 1, "the caller reached the target");
        caller.LingerState = new LingerOption(true, 0);
        caller.Close(); // gone without a FIN

        await targetSaw.Task.WaitAsync(TimeSpan.FromSeconds(15)); // the target's connection ended too
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "the caller went away"), "the server logs why the connection ended");
        await Eventually.WaitUntilAsync(() => TcpTunnel.OpenConnections(stack, session) == 0, "the connection no longer counts as open");
    }

    [Fact]
    public async Task A_target_nobody_listens_on_cuts_the_caller_at_once()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync();
        ScriptedTcpTarget closed = ScriptedTcpTarget.Echo();
        string address = closed.Address;
        await closed.DisposeAsync(); // its port is free again: nothing listens there
        string session = NewSession("refused");
        await stack.StartClientAsync(session, backend: null, token: null, maxConcurrency: 100, "--tcp", address);
        int port = TcpTunnel.PortOf(stack, session)!.Value;

        using Socket caller = await TcpTunnel.ConnectAsync(port);

        Assert.True(await TcpTunnel.EndsWithinAsync(caller, TimeSpan.FromSeconds(15)), "the caller's connection should end");
        await Eventually.WaitUntilAsync(() => TcpTunnel.Logged(session, "its target refused the connection"), "the server logs why");
    }

    [Fact]
    public async Task A_client_with_tcp_and_no_backend_serves_tcp_only_and_refuses_http()
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync();
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = NewSession("only");
        await using var client = new TunnelClientHandle(Tunnel2.TunnelClient.TunnelClientApp.Create([
            "--server", stack.TunnelUrl.ToString().TrimEnd('/'), "--session", session, "--token", TunnelStack.Token,
            "--tcp", target.Address, "--Serilog:MinimumLevel:Default=Warning", .. CapturedLogs.ServerArgs]));
        await client.StartAsync();
        await Eventually.WaitUntilAsync(() => TcpTunnel.PortOf(stack, session) is not null && stack.Registry.GetUplinks(session).Count == 1, "the client is connected");

        using Socket caller = await TcpTunnel.ConnectAsync(TcpTunnel.PortOf(stack, session)!.Value);
        await caller.SendAsync("tcp\n"u8.ToArray());
        Assert.Equal("tcp\n", Encoding.ASCII.GetString(await TcpTunnel.ReadAsync(caller, 4)));
        using var http = new HttpClient();
        using HttpResponseMessage answer = await http.GetAsync(stack.SessionUrl(session, "/loadtest/ping"));

        Assert.Equal(System.Net.HttpStatusCode.BadGateway, answer.StatusCode);
        // Refused, not sent to a default backend. The refusal's line is written off the client's loop, so it may follow the 502.
        await Eventually.WaitUntilAsync(
            () => CapturedLogs.Everything().Any(line => line.Contains("serves TCP only", StringComparison.Ordinal)), "the client logs why it refused");
    }
}
