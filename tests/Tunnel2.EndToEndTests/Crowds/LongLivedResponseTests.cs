using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>
/// Long-lived answers do not starve short ones: a request gives its backend slot back once its response head is out,
/// so endless SSE streams hold none, even with the client's limit far below their number.
/// </summary>
public sealed class LongLivedResponseTests
{
    private const string Session = "long-lived";
    private const int Streams = 50;
    private const int ShortRequests = 1000;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Fifty_endless_SSE_streams_all_start_at_once_and_1000_short_requests_beside_them_are_answered_at_normal_latency_with_a_limit_of_10()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await stack.StartClientAsync(Session, maxConcurrency: 10);
        using HttpClient http = new(new SocketsHttpHandler { UseCookies = false, MaxConnectionsPerServer = 200 }) { Timeout = TimeSpan.FromMinutes(2) };
        Uri ping = stack.SessionUrl(Session, "/loadtest/ping");
        await ShortRequestsAsync(http, ping, 200); // warm-up: JIT, pooled connections
        double idleMedian = Latencies.Percentile(await ShortRequestsAsync(http, ping, 200), 0.50);

        // Each stream's head and first event must arrive while all the others are still open: a slot held per stream
        // would stop at 10 here and time out.
        var streams = new List<(HttpResponseMessage Response, StreamReader Reader)>();
        try
        {
            for (int i = 0; i < Streams; i++)
            {
                HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(Session, "/loadtest/sse?n=0&intervalMs=500"),
                    HttpCompletionOption.ResponseHeadersRead, Token).WaitAsync(TimeSpan.FromSeconds(10), Token);
                var reader = new StreamReader(await response.Content.ReadAsStreamAsync(Token));
                streams.Add((response, reader));
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                Assert.Equal("id: 0", await reader.ReadLineAsync(Token).AsTask().WaitAsync(TimeSpan.FromSeconds(10), Token));
            }

            double[] busy = await ShortRequestsAsync(http, ping, ShortRequests);
            double busyMedian = Latencies.Percentile(busy, 0.50);
            TestContext.Current.TestOutputHelper?.WriteLine(
                $"ping median {idleMedian:F2} ms alone, {busyMedian:F2} ms beside {Streams} endless SSE streams ({ShortRequests} requests)");

            // A correctness check, not a benchmark: requests queued behind the streams' slots would never be answered.
            Assert.Equal(ShortRequests, busy.Length);
            Assert.True(busyMedian <= idleMedian + 20, $"ping median was {busyMedian:F1} ms beside the streams, {idleMedian:F1} ms alone");

            // The streams are still alive after all that: each still delivers its next event.
            foreach ((_, StreamReader reader) in streams)
            {
                Assert.NotNull(await reader.ReadLineAsync(Token).AsTask().WaitAsync(TimeSpan.FromSeconds(10), Token));
            }
        }
        finally
        {
            foreach ((HttpResponseMessage response, StreamReader reader) in streams)
            {
                reader.Dispose();
                response.Dispose();
            }
        }
    }

    /// <summary>Sends the requests 50 at a time and returns each one's latency; every answer must be 200 "pong".</summary>
    private static async Task<double[]> ShortRequestsAsync(HttpClient http, Uri url, int count)
    {
        var latencies = new double[count];
        int next = -1;
        await Task.WhenAll(Enumerable.Range(0, 50).Select(async _ =>
        {
            int i;
            while ((i = Interlocked.Increment(ref next)) < count)
            {
                long started = Stopwatch.GetTimestamp();
                using HttpResponseMessage response = await http.GetAsync(url, Token);
                Assert.Equal("pong", await response.Content.ReadAsStringAsync(Token));
                latencies[i] = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
            }
        }));
        return latencies;
    }

}
