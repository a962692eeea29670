using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>
/// The connection budget, measured where it matters: a TunnelServer process of its own carrying 100 large downloads
/// that its callers read at 1 MiB/s each stays within 128 MiB of growth (the Uplink v2 issue's bound; before the
/// budget and the server's own uplink socket it grew 163 MiB under 100 readers and 309 MiB under 1,000).
/// </summary>
public sealed class ServerMemoryTests
{
    private const string Session = "server-memory";
    private const int Readers = 100;
    private const int ChunkBytes = 16 * 1024;
    private static readonly TimeSpan ChunkInterval = TimeSpan.FromMilliseconds(16); // ~1 MiB/s per reader
    private static readonly TimeSpan ReadFor = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task A_hundred_1_GiB_downloads_read_at_1_MiB_per_second_grow_the_server_by_at_most_128_MiB()
    {
        await using ProcessStack stack = await ProcessStack.StartAsync(Session);
        using HttpClient http = CallerHttp.Create();
        await using MemorySampler serverMemory = MemorySampler.Start(stack.Server.Id);
        Uri download = stack.SessionUrl($"/loadtest/bytes/{1L << 30}");
        long[] read = await Task.WhenAll(Enumerable.Range(0, Readers).Select(_ => ReadSlowlyAsync(http, download)));

        long expected = (long)(ReadFor / ChunkInterval) * ChunkBytes;
        long fewest = read.Min();
        TestContext.Current.TestOutputHelper?.WriteLine(
            $"server growth {serverMemory.PeakGrowthBytes / 1024 / 1024} MiB; slowest reader {fewest} of {expected} bytes");
        Assert.True(fewest >= expected / 2, $"a reader got {fewest} of the {expected} bytes it asked for: the crowd stalled");
        Assert.True(serverMemory.PeakGrowthBytes <= 128L * 1024 * 1024,
            $"the server grew by {serverMemory.PeakGrowthBytes / 1024 / 1024} MiB carrying {Readers} slow downloads");
        Assert.False(stack.Server.HasExited || stack.Client.HasExited, "a tunnel process exited during the test");
    }

    /// <summary>Reads up to one chunk per interval for <see cref="ReadFor"/>, then drops the download; returns the bytes read.</summary>
    private static async Task<long> ReadSlowlyAsync(HttpClient http, Uri download)
    {
        using HttpResponseMessage response = await http.GetAsync(download, HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        await using Stream body = await response.Content.ReadAsStreamAsync();
        byte[] buffer = new byte[ChunkBytes];
        long total = 0;
        var clock = Stopwatch.StartNew();
        using var tick = new PeriodicTimer(ChunkInterval);
        while (clock.Elapsed < ReadFor && await tick.WaitForNextTickAsync())
        {
            int wanted = ChunkBytes;
            while (wanted > 0)
            {
                int got = await body.ReadAsync(buffer.AsMemory(0, wanted));
                if (got == 0)
                {
                    return total;
                }

                total += got;
                wanted -= got;
            }
        }

        return total;
    }
}
