using System.Diagnostics;
using System.Net;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Http;

/// <summary>A timeout or a caller who leaves ends the work on every hop, down to the backend's request.</summary>
public sealed class TimeoutAndCancellationTests
{
    private const string Session = "cancellation";

    [Fact]
    public async Task No_response_head_within_the_timeout_gives_504_problem_and_cancels_the_backend_request()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync("--TunnelServer:Uplink:ResponseHeadTimeout=00:00:01");
        await stack.StartClientAsync(Session);
        using HttpClient http = CallerHttp.Create();

        var clock = Stopwatch.StartNew();
        using HttpResponseMessage response = await http.GetAsync(stack.SessionUrl(Session, "/loadtest/delay/5000"));
        clock.Stop();

        Assert.Equal(HttpStatusCode.GatewayTimeout, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.InRange(clock.Elapsed, TimeSpan.FromMilliseconds(900), TimeSpan.FromSeconds(3));
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(Session).Single().ActiveStreamCount == 0, "the timed-out stream is reset");
        // Well before the 5 s wait would have ended on its own.
        await Eventually.WaitUntilAsync(() => stack.Delays.CancelledWaits == 1, "the backend's request is cancelled", TimeSpan.FromSeconds(3));
        Assert.Equal(0, stack.Delays.CompletedWaits);
    }

    [Fact]
    public async Task A_caller_who_disconnects_mid_request_makes_the_client_abort_its_backend_request()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        await stack.StartClientAsync(Session);
        using HttpClient http = CallerHttp.Create();
        using var giveUp = new CancellationTokenSource();
        Task<HttpResponseMessage> call = http.GetAsync(stack.SessionUrl(Session, "/loadtest/delay/10000"), giveUp.Token);
        await Eventually.WaitUntilAsync(() => stack.Delays.ActiveWaits == 1, "the backend is waiting");

        await giveUp.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => call);

        await Eventually.WaitUntilAsync(() => stack.Delays.CancelledWaits == 1, "the backend's request is cancelled", TimeSpan.FromSeconds(3));
        Assert.Equal(0, stack.Delays.CompletedWaits);
        await Eventually.WaitUntilAsync(() => stack.Registry.GetUplinks(Session).Single().ActiveStreamCount == 0, "the stream is gone");
    }

    [Fact]
    public async Task A_caller_who_disconnects_while_queued_in_the_client_never_reaches_the_backend()
    {
        await using TunnelStack stack = await TunnelStack.StartAsync();
        TunnelClientHandle client = await stack.StartClientAsync(Session, maxConcurrency: 1);
        using HttpClient http = CallerHttp.Create();
        using var releaseSlot = new CancellationTokenSource();
        Task<HttpResponseMessage> holdsTheSlot = http.GetAsync(stack.SessionUrl(Session, "/loadtest/delay/10000"), releaseSlot.Token);
        await Eventually.WaitUntilAsync(() => stack.Delays.ActiveWaits == 1, "the first request holds the only slot");
        using var giveUp = new CancellationTokenSource();
        Task<HttpResponseMessage> queued = http.GetAsync(stack.SessionUrl(Session, "/loadtest/delay/10001"), giveUp.Token);
        await Eventually.WaitUntilAsync(() => client.QueuedRequests == 1, "the second request waits in the client's queue");

        await giveUp.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => queued);
        await Eventually.WaitUntilAsync(() => client.QueuedRequests == 0, "the abandoned request leaves the queue", TimeSpan.FromSeconds(3));

        // Free the slot. Were the abandoned request still waiting, it would take the slot now, ahead of the next one.
        await releaseSlot.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => holdsTheSlot);
        // The backend hears of the abort a moment after the client frees the slot; wait, so the peak below is exact.
        await Eventually.WaitUntilAsync(() => stack.Delays.CancelledWaits == 1, "the first request's wait is cancelled");
        using HttpResponseMessage next = await http.GetAsync(stack.SessionUrl(Session, "/loadtest/delay/0")).WaitAsync(TimeSpan.FromSeconds(5));
        Assert.Equal(HttpStatusCode.OK, next.StatusCode);
        Assert.Equal(1, stack.Delays.CompletedWaits); // the last request only: the abandoned one never started a wait
        Assert.Equal(0, stack.Delays.ActiveWaits);
        Assert.Equal(1, stack.Delays.PeakActiveWaits);
    }
}
