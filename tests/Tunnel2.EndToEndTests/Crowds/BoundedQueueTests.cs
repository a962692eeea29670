using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Crowds;

/// <summary>The client runs at most N backend requests, queues a bounded number more, and refuses the rest at once.</summary>
public sealed class BoundedQueueTests
{
    private const string Session = "bounded-queue";

    [Fact]
    public async Task With_2_slots_and_a_queue_of_3_five_requests_succeed_two_at_a_time_and_more_get_503_at_once()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        TunnelClientHandle client = await stack.StartClientAsync(Session, maxConcurrency: 2, extraArgs: ["--TunnelClient:Limits:MaxQueue=3"]);
        using HttpClient http = CallerHttp.Create();
        // 2 s per admitted request: "at once" below has to hold on a busy shared machine too (1 s was tight there).
        Uri delay = stack.SessionUrl(Session, "/loadtest/delay/2000");

        Task<HttpResponseMessage>[] admitted = [.. Enumerable.Range(0, 5).Select(_ => http.GetAsync(delay))];
        await Eventually.WaitUntilAsync(() => stack.Delays.ActiveWaits == 2 && client.QueuedRequests == 3, "two requests run and three wait");

        var clock = Stopwatch.StartNew();
        HttpResponseMessage[] refused = await Task.WhenAll(Enumerable.Range(0, 3).Select(_ => http.GetAsync(delay)));
        clock.Stop();
        // "At once": answered while all five admitted requests, the first of which ends 2 s after it began, still run.
        Assert.All(admitted, request => Assert.False(request.IsCompleted, "an admitted request ended before the refusals came"));
        Assert.True(clock.Elapsed < TimeSpan.FromMilliseconds(1800), $"the refusals took {clock.Elapsed}");
        foreach (HttpResponseMessage response in refused)
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
            Assert.NotNull(response.Headers.RetryAfter);
            response.Dispose();
        }

        foreach (HttpResponseMessage response in await Task.WhenAll(admitted))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            response.Dispose();
        }

        Assert.Equal(2, stack.Delays.PeakActiveWaits);
        Assert.Equal(5, stack.Delays.CompletedWaits); // the refused ones never reached the backend
        Assert.Equal(0, client.QueuedRequests);
    }
}
