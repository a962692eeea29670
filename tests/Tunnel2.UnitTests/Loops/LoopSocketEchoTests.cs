using System.Net.Sockets;
using System.Security.Cryptography;

namespace Tunnel2.UnitTests.Loops;

public sealed class LoopSocketEchoTests
{
    [Fact]
    public async Task A_loop_socket_echoes_over_loopback_and_ends_after_the_peers_end()
    {
        using var harness = new LoopHarness();
        EchoServer server = await EchoServer.StartAsync(harness);
        using Socket client = await LoopHarness.ConnectAsync(server.Port);

        await client.SendAsync("hello, loop"u8.ToArray());
        client.Shutdown(SocketShutdown.Send);

        Assert.Equal("hello, loop"u8.ToArray(), await LoopHarness.ReadToEndAsync(client));
        Assert.Empty(await harness.OnLoopAsync(() => server.Closed.ToList()));
    }

    [Fact]
    public async Task A_thousand_concurrent_streams_come_back_intact()
    {
        using var harness = new LoopHarness();
        EchoServer server = await EchoServer.StartAsync(harness);
        const int Streams = 1_000, Bytes = 48 * 1024;

        Socket[] clients = await Task.WhenAll(Enumerable.Range(0, Streams).Select(_ => LoopHarness.ConnectAsync(server.Port)));
        try
        {
            // Every stream is connected before any sends: the loop holds all 1,000 at once.
            await Eventually.WaitUntilAsync(() => harness.OnLoopAsync(() => server.Accepted == Streams), "the loop accepted every stream");
            bool[] intact = await Task.WhenAll(clients.Select((client, i) => EchoOnceAsync(client, seed: i, Bytes)));
            Assert.All(intact, Assert.True);
            Assert.Empty(await harness.OnLoopAsync(() => server.Closed.ToList()));
        }
        finally
        {
            foreach (Socket client in clients)
            {
                client.Dispose();
            }
        }
    }

    private static async Task<bool> EchoOnceAsync(Socket client, int seed, int bytes)
    {
        byte[] sent = new byte[bytes];
        new Random(seed).NextBytes(sent);
        Task<byte[]> echoed = LoopHarness.ReadToEndAsync(client);
        for (int offset = 0; offset < bytes; offset += 8 * 1024)
        {
            await client.SendAsync(sent.AsMemory(offset, Math.Min(8 * 1024, bytes - offset)));
        }
        client.Shutdown(SocketShutdown.Send);
        return SHA256.HashData(await echoed).AsSpan().SequenceEqual(SHA256.HashData(sent));
    }
}
