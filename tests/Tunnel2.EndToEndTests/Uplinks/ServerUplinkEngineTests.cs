using System.Net.Sockets;
using System.Security.Cryptography;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.EndToEndTests.Tcp;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>
/// <c>TunnelServer:Uplink:Engine</c> (issue 52, stage 3b): HTTP exchanges and a TCP session through a server whose
/// plain-TCP uplink runs on its event loop (Loop, the default) or on the runtime's sockets, the same bytes either way,
/// whichever engine the client's uplink runs on. A fault on the server's loop fails the test (TunnelStack).
/// </summary>
public sealed class ServerUplinkEngineTests
{
    private static string ServerEngine(string engine) => $"--TunnelServer:Uplink:Engine={engine}";

    private static bool OnLoopExpected(string engine) => engine == "Loop" && Tunnel2.Loops.EventLoop.IsSupported;

    [Theory]
    [InlineData("Loop", "Loop")]
    [InlineData("Loop", "Sockets")]
    [InlineData("Sockets", "Loop")]
    public async Task Concurrent_uploads_come_back_byte_exact_on_both_engines(string serverEngine, string clientEngine)
    {
        await using TunnelStack stack = await TunnelStack.StartAsync(ServerEngine(serverEngine));
        string session = $"srv-{serverEngine.ToLowerInvariant()}-{Guid.NewGuid():N}"[..30];
        await using TunnelClientHandle client = await stack.StartClientAsync(session, extraArgs: [$"--TunnelClient:Uplink:Engine={clientEngine}"]);
        await EchoUploads.RunAsync(stack.SessionUrl(session, "/loadtest/echo"));
        Assert.All(stack.Registry.GetUplinks(session), uplink => Assert.Equal(OnLoopExpected(serverEngine), uplink.IsOnLoop));
        Assert.NotEmpty(stack.Registry.GetUplinks(session));
    }

    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task A_tcp_echo_is_byte_exact_on_both_engines(string serverEngine)
    {
        await using TunnelStack stack = await TcpTunnel.StartStackAsync(ServerEngine(serverEngine));
        await using ScriptedTcpTarget target = ScriptedTcpTarget.Echo();
        string session = $"srv-tcp-{serverEngine.ToLowerInvariant()}-{Guid.NewGuid():N}"[..30];
        int port = await TcpTunnel.StartClientAsync(stack, session, target);
        byte[] sent = RandomNumberGenerator.GetBytes(2 * 1024 * 1024);

        using Socket caller = await TcpTunnel.ConnectAsync(port);
        Task<byte[]> echoed = ScriptedTcpTarget.ReadToEndAsync(caller);
        await ScriptedTcpTarget.SendAllAsync(caller, sent);
        caller.Shutdown(SocketShutdown.Send);

        byte[] received = await echoed.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.True(sent.AsSpan().SequenceEqual(received), "the echoed bytes differ from those sent");
        Assert.Equal(OnLoopExpected(serverEngine), Assert.Single(stack.Registry.GetUplinks(session)).IsOnLoop);
    }
}
