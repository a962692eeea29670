using System.Diagnostics;
using System.Net;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.TestBackend.Tests;

public sealed class DelayEndpointTests(BackendFixture fixture)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(0)]
    [InlineData(150)]
    public async Task Delay_waits_then_answers_the_delay_as_json(int delayMs)
    {
        var clock = Stopwatch.StartNew();
        using var response = await fixture.Client.GetAsync($"loadtest/delay/{delayMs}", Token);
        clock.Stop();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync(Token));
        Assert.Equal(delayMs, json.RootElement.GetProperty("delayMs").GetInt32());

        // Task.Delay may end up to a timer tick early.
        Assert.True(clock.Elapsed >= TimeSpan.FromMilliseconds(delayMs - 20), $"answered after {clock.Elapsed}");
    }

    [Theory]
    [InlineData("-1")]
    [InlineData("60001")]
    [InlineData("abc")]
    [InlineData("1.5")]
    [InlineData("99999999999999999999")]
    public async Task Delay_rejects_a_bad_value_with_problem_json(string value)
    {
        using var response = await fixture.Client.GetAsync($"loadtest/delay/{value}", Token);

        await ProblemAssert.IsProblemAsync(response, HttpStatusCode.BadRequest, value, Token);
    }

    [Fact]
    public async Task Completed_waits_are_counted_and_served_by_stats()
    {
        using var delay = await fixture.Client.GetAsync("loadtest/delay/0", Token);
        Assert.Equal(HttpStatusCode.OK, delay.StatusCode);

        using var response = await fixture.Client.GetAsync("loadtest/stats", Token);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync(Token));
        var served = json.RootElement.GetProperty("completedWaits").GetInt64();
        Assert.True(served >= 1, $"completedWaits was {served}");
        Assert.True(json.RootElement.GetProperty("activeWaits").GetInt64() >= 0);
        Assert.True(json.RootElement.GetProperty("cancelledWaits").GetInt64() >= 0);

        // Counters only grow, so the live value is at least what was served a moment ago.
        var statistics = fixture.Backend.Services.GetRequiredService<DelayStatistics>();
        Assert.True(statistics.CompletedWaits >= served);
    }

    [Fact]
    public async Task A_caller_who_gives_up_ends_the_wait_early()
    {
        // Its own backend, so no other test's delays touch the counters.
        await using var backend = await RunningBackend.StartAsync(Token);
        var statistics = backend.Services.GetRequiredService<DelayStatistics>();
        var clock = Stopwatch.StartNew();
        using var giveUp = CancellationTokenSource.CreateLinkedTokenSource(Token);

        var call = backend.Client.GetAsync("loadtest/delay/5000", giveUp.Token);
        Assert.True(
            await Eventually.TryWaitAsync(() => statistics.ActiveWaits == 1, TimeSpan.FromSeconds(4), Token),
            "the server never started waiting");
        await giveUp.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => call);

        Assert.True(
            await Eventually.TryWaitAsync(() => statistics.CancelledWaits == 1, TimeSpan.FromSeconds(3), Token),
            "the wait was not cancelled");
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(4.5), $"the wait ended only after {clock.Elapsed}");
        Assert.Equal(0, statistics.CompletedWaits);
        Assert.Equal(0, statistics.ActiveWaits);

        using var stats = await backend.Client.GetAsync("loadtest/stats", Token);
        using var json = JsonDocument.Parse(await stats.Content.ReadAsStringAsync(Token));
        Assert.Equal(1, json.RootElement.GetProperty("cancelledWaits").GetInt64());
        Assert.Equal(0, json.RootElement.GetProperty("completedWaits").GetInt64());
    }

    [Fact]
    public async Task Peak_active_waits_records_the_most_waits_at_once()
    {
        await using var backend = await RunningBackend.StartAsync(Token);
        var statistics = backend.Services.GetRequiredService<DelayStatistics>();

        var calls = Enumerable.Range(0, 3).Select(_ => backend.Client.GetAsync("loadtest/delay/2000", Token)).ToArray();
        Assert.True(
            await Eventually.TryWaitAsync(() => statistics.ActiveWaits == 3, TimeSpan.FromSeconds(4), Token),
            "the three waits never ran together");
        foreach (var response in await Task.WhenAll(calls))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            response.Dispose();
        }

        using var single = await backend.Client.GetAsync("loadtest/delay/0", Token);
        Assert.Equal(HttpStatusCode.OK, single.StatusCode);

        // Three at once, then one alone: the peak stays at three while the active count is back to zero.
        Assert.Equal(3, statistics.PeakActiveWaits);
        Assert.Equal(0, statistics.ActiveWaits);
        using var stats = await backend.Client.GetAsync("loadtest/stats", Token);
        using var json = JsonDocument.Parse(await stats.Content.ReadAsStringAsync(Token));
        Assert.Equal(3, json.RootElement.GetProperty("peakActiveWaits").GetInt64());
    }
}
