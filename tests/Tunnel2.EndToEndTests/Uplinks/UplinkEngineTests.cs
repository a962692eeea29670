using Microsoft.Extensions.DependencyInjection;
using Tunnel2.EndToEndTests.Infrastructure;
using Tunnel2.TunnelClient.EventLoops;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>
/// <c>TunnelClient:Uplink:Engine</c> (issue 52, stage 3a): HTTP exchanges through a client whose plain-TCP uplink runs on
/// its event loop (Loop, the default) or on the runtime's sockets, the same bytes either way. A fault on the client's
/// loop fails the test (TunnelClientHandle).
/// </summary>
public sealed class UplinkEngineTests
{
    [Theory]
    [InlineData("Loop")]
    [InlineData("Sockets")]
    public async Task Concurrent_uploads_come_back_byte_exact_on_both_engines(string engine)
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        string session = $"engine-{engine.ToLowerInvariant()}-{Guid.NewGuid():N}"[..30];
        await using TunnelClientHandle client = await stack.StartClientAsync(session, extraArgs: [$"--TunnelClient:Uplink:Engine={engine}"]);
        await EchoUploads.RunAsync(stack.SessionUrl(session, "/loadtest/echo"));
        int onLoop = client.Host.Services.GetRequiredService<ClientLoop>().UplinksTaken;
        Assert.Equal(engine == "Loop" && Tunnel2.Loops.EventLoop.IsSupported ? 1 : 0, onLoop);
    }
}
