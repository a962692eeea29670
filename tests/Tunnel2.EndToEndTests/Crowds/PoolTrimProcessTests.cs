using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>
/// Issue 52 item 5, against the built executables: what a storm of uploads left in the buffer pools
/// (Tunnel2.Protocol.Buffers, up to 64 MiB a process) goes back to the system once the processes idle. The trim period
/// is a second here (TunnelServer:Uplink:BufferTrimPeriod, TunnelClient:Uplink:BufferTrimPeriod; 10 s by default), and
/// each process's resident memory is read on its own until it is back within a bound of what it was before the storm.
/// Without the compacting collection PoolTrim asks for after a trim, nothing came back: the figures, and the bounds'
/// origin, are in docs/benchmarks/2026-11-29-process-limits.md.
/// </summary>
public sealed class PoolTrimProcessTests
{
    private const string Session = "pool-trim";
    private const int Callers = 200;
    private const int BackendRate = 64 * 1024;
    private static readonly TimeSpan TrimPeriod = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan StormLength = TimeSpan.FromSeconds(3);

    /// <summary>What a process may keep over its pre-storm memory once idle (measured +13 to +28 MiB).</summary>
    private const long KeptBound = 40L << 20;

    /// <summary>
    /// What each process must give back of its peak (measured 30 to 35 MiB with the collection, none without it): a
    /// process that the storm grew by less than <see cref="StormAtLeast"/> did not fill its pools, which fails too.
    /// </summary>
    private const long GivenBackAtLeast = 8L << 20;

    private const long StormAtLeast = 20L << 20;

    [Fact]
    public async Task After_a_storm_of_uploads_each_tunnel_process_gives_its_pooled_buffers_back_to_the_system()
    {
        await using SlowReadingBackend backend = SlowReadingBackend.Start(BackendRate);
        await using ProcessStack stack = await ProcessStack.StartAsync(Session, new ProcessStackOptions
        {
            BackendUrl = backend.Url,
            ProbePath = "/ping",
            ServerArgs = [$"--TunnelServer:Uplink:BufferTrimPeriod={TrimPeriod:c}"],
            ClientArgs = ["--max-concurrency", "1000", $"--TunnelClient:Uplink:BufferTrimPeriod={TrimPeriod:c}"],
        });
        long serverBefore = ProcessStatus.Of(stack.Server.Id).ResidentBytes, clientBefore = ProcessStatus.Of(stack.Client.Id).ResidentBytes;
        (long serverPeak, long clientPeak) = await StormAsync(stack, backend);

        Assert.True(serverPeak - serverBefore >= StormAtLeast && clientPeak - clientBefore >= StormAtLeast,
            $"the storm grew the server by {(serverPeak - serverBefore) >> 20} MiB and the client by {(clientPeak - clientBefore) >> 20} MiB: too little to fill the pools");

        long server = serverPeak, client = clientPeak;
        bool settled = await Eventually.TryWaitAsync(() =>
        {
            server = ProcessStatus.Of(stack.Server.Id).ResidentBytes;
            client = ProcessStatus.Of(stack.Client.Id).ResidentBytes;
            return GaveBack(serverBefore, serverPeak, server) && GaveBack(clientBefore, clientPeak, client);
        }, TimeSpan.FromSeconds(20));
        string figures = $"server {serverBefore >> 20} MiB before, {serverPeak >> 20} at the peak, {server >> 20} after; " +
            $"client {clientBefore >> 20}, {clientPeak >> 20}, {client >> 20}";
        TestContext.Current.TestOutputHelper?.WriteLine(figures);

        Assert.True(settled, $"a process did not give back {GivenBackAtLeast >> 20} MiB of its peak to within {KeptBound >> 20} MiB of its memory before the storm: {figures}");
        Assert.False(stack.Server.HasExited || stack.Client.HasExited, "a tunnel process exited during the test");
    }

    private static bool GaveBack(long before, long peak, long now) => now <= before + KeptBound && now <= peak - GivenBackAtLeast;

    /// <summary>The storm: callers push uploads to the slow backend for a few seconds and reset; returns each process's peak resident memory.</summary>
    private static async Task<(long Server, long Client)> StormAsync(ProcessStack stack, SlowReadingBackend backend)
    {
        await using MemorySampler server = MemorySampler.Start(stack.Server.Id);
        await using MemorySampler client = MemorySampler.Start(stack.Client.Id);
        long serverBefore = ProcessStatus.Of(stack.Server.Id).ResidentBytes, clientBefore = ProcessStatus.Of(stack.Client.Id).ResidentBytes;
        using var stop = new CancellationTokenSource(StormLength);
        await Task.WhenAll(Enumerable.Range(0, Callers).Select(_ => UploadPush.RunAsync(stack, stop.Token))).WaitAsync(TimeSpan.FromSeconds(30));
        await Eventually.WaitUntilAsync(() => backend.Bodies.Count == Callers, "every upload's end reaches the backend");
        return (serverBefore + server.PeakGrowthBytes, clientBefore + client.PeakGrowthBytes);
    }
}
