using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Admission;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Upgrades;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Steps;

/// <summary>
/// The client's admission step on its own: the concurrency slot, its queue, and the cap on upgrades, all taken and given
/// back by this one step around the steps after it (here a stand-in the test holds open, ends or makes throw).
/// </summary>
public sealed class RelayAdmissionTests : IAsyncDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly UplinkPair _uplinks = UplinkPair.Start();
    private readonly TunnelClientMetrics _metrics;

    public RelayAdmissionTests() => _metrics = new TunnelClientMetrics(_services.GetRequiredService<IMeterFactory>());

    /// <summary>How the steps after admission end, for <see cref="Slot_and_upgrade_place_go_back_on_every_path"/>.</summary>
    public enum Path
    {
        Answered,
        HeadSentThenAnswered,
        Failed,
        Threw,
    }

    public async ValueTask DisposeAsync()
    {
        await _uplinks.DisposeAsync();
        await _services.DisposeAsync();
    }

    [Fact]
    public async Task An_exchange_takes_the_one_slot_a_second_finds_no_queue_and_its_stream_is_reset_as_overloaded()
    {
        var next = new HeldNext();
        using RelayAdmission admission = Admission(maxConcurrency: 1, maxQueue: 0, maxUpgrades: 10, next.RunAsync, out _);
        (UplinkStream _, RelayExchange first) = await ExchangeAsync(Get());
        (UplinkStream secondServer, RelayExchange second) = await ExchangeAsync(Get());

        Task running = admission.RunAsync(first).AsTask();
        Assert.True((await next.Entered.WithTimeout()).SlotHeld);
        await admission.RunAsync(second).AsTask().WithTimeout();

        Assert.Equal(1, next.Runs);
        Assert.False(second.SlotHeld);
        Assert.Equal("queue-full", second.Failure?.Reason);
        StreamResetException reset = await Assert.ThrowsAsync<StreamResetException>(() => secondServer.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(ProtocolErrorCode.Overloaded, reset.ErrorCode);
        next.Finish();
        await running.WithTimeout();
    }

    [Fact]
    public async Task The_slot_goes_back_as_the_response_head_goes_up_and_only_once()
    {
        var streamingNext = new HeldNext(sendHead: true);
        var holdingNext = new HeldNext();
        RelayExchange? streamingExchange = null;
        using RelayAdmission admission = Admission(maxConcurrency: 1, maxQueue: 0, maxUpgrades: 10,
            exchange => exchange == streamingExchange ? streamingNext.RunAsync(exchange) : holdingNext.RunAsync(exchange), out _);
        (UplinkStream _, RelayExchange streaming) = await ExchangeAsync(Get());
        (UplinkStream _, RelayExchange second) = await ExchangeAsync(Get());
        (UplinkStream _, RelayExchange third) = await ExchangeAsync(Get());
        streamingExchange = streaming;

        Task running = admission.RunAsync(streaming).AsTask();
        await streamingNext.Entered.WithTimeout();
        Assert.False(streaming.SlotHeld); // its head is out: a long body holds no slot

        Task secondRunning = admission.RunAsync(second).AsTask();
        Assert.Same(second, await holdingNext.Entered.WithTimeout()); // the one slot, given back by the first
        Assert.True(second.SlotHeld);
        streamingNext.Finish();
        await running.WithTimeout(); // its end gives nothing back a second time

        await admission.RunAsync(third).AsTask().WithTimeout();
        Assert.Equal("queue-full", third.Failure?.Reason);
        holdingNext.Finish();
        await secondRunning.WithTimeout();
    }

    [Fact]
    public async Task A_queued_exchange_gets_the_slot_when_the_one_before_it_ends()
    {
        var next = new HeldNext();
        using RelayAdmission admission = Admission(maxConcurrency: 1, maxQueue: 1, maxUpgrades: 10, next.RunAsync, out _);
        (UplinkStream _, RelayExchange first) = await ExchangeAsync(Get());
        (UplinkStream _, RelayExchange second) = await ExchangeAsync(Get());
        Task running = admission.RunAsync(first).AsTask();
        await next.Entered.WithTimeout();

        Task waiting = admission.RunAsync(second).AsTask();
        Assert.False(waiting.IsCompleted);
        Assert.Equal(1, admission.Queued);
        next.Finish();
        await running.WithTimeout();

        await waiting.WithTimeout();
        Assert.Equal(2, next.Runs);
        Assert.Null(second.Failure);
    }

    [Fact]
    public async Task An_upgrade_beyond_the_cap_is_refused_before_it_takes_a_slot()
    {
        var next = new HeldNext();
        using RelayAdmission admission = Admission(maxConcurrency: 10, maxQueue: 0, maxUpgrades: 0, next.RunAsync, out UpgradeRelay upgrades);
        (UplinkStream server, RelayExchange upgrade) = await ExchangeAsync(Upgrade());
        Assert.True(upgrade.IsUpgrade);

        await admission.RunAsync(upgrade).AsTask().WithTimeout();

        Assert.Equal(0, next.Runs);
        Assert.False(upgrade.SlotHeld);
        Assert.Equal(0, upgrades.Count);
        Assert.Equal("upgrade-limit", upgrade.Failure?.Reason);
        StreamResetException reset = await Assert.ThrowsAsync<StreamResetException>(() => server.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(ProtocolErrorCode.Overloaded, reset.ErrorCode);
    }

    [Theory]
    [InlineData(Path.Answered)]
    [InlineData(Path.HeadSentThenAnswered)]
    [InlineData(Path.Failed)]
    [InlineData(Path.Threw)]
    public async Task Slot_and_upgrade_place_go_back_on_every_path(Path path)
    {
        int seenSlots = -1, seenPlaces = -1;
        UpgradeRelay? upgradesSeen = null;
        RelayExchange? first = null;
        using RelayAdmission admission = Admission(maxConcurrency: 1, maxQueue: 0, maxUpgrades: 1, exchange =>
        {
            if (exchange != first)
            {
                return ValueTask.CompletedTask;
            }

            seenPlaces = upgradesSeen!.Count;
            seenSlots = exchange.SlotHeld ? 1 : 0;
            switch (path)
            {
                case Path.HeadSentThenAnswered:
                    exchange.ResponseHeadSent();
                    break;
                case Path.Failed:
                    exchange.Stream.Reset(ProtocolErrorCode.BackendUnreachable);
                    break;
                case Path.Threw:
                    throw new IOException("the backend connection broke");
            }

            return ValueTask.CompletedTask;
        }, out UpgradeRelay upgrades);
        upgradesSeen = upgrades;
        (UplinkStream _, RelayExchange exchange) = await ExchangeAsync(Upgrade());
        first = exchange;

        ValueTask run = admission.RunAsync(exchange);
        if (path == Path.Threw)
        {
            await Assert.ThrowsAsync<IOException>(() => run.AsTask());
        }
        else
        {
            await run;
        }

        Assert.Equal((1, 1), (seenSlots, seenPlaces)); // held while the steps after it ran
        Assert.False(exchange.SlotHeld);
        Assert.Equal(0, upgrades.Count);
        (UplinkStream _, RelayExchange again) = await ExchangeAsync(Upgrade());
        await admission.RunAsync(again).AsTask().WithTimeout(); // the one slot and the one place are free again
        Assert.Null(again.Failure);
    }

    private RelayAdmission Admission(int maxConcurrency, int maxQueue, int maxUpgrades, Func<RelayExchange, ValueTask> next, out UpgradeRelay upgrades) =>
        RelaySteps.Admission(_metrics, maxConcurrency, maxQueue, maxUpgrades, next, out upgrades);

    private static RequestHead Get() => new("GET", "/", []);

    private static RequestHead Upgrade() => new("GET", "/socket", [new HeaderField("Connection", "Upgrade"), new HeaderField("Upgrade", "websocket")]);

    private Task<(UplinkStream Server, RelayExchange Exchange)> ExchangeAsync(RequestHead head) => RelaySteps.ExchangeAsync(_uplinks, head);

    /// <summary>The steps after admission, held open until the test says <see cref="Finish"/>.</summary>
    private sealed class HeldNext(bool sendHead = false)
    {
        private readonly TaskCompletionSource<RelayExchange> _entered = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _finish = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _runs;

        public Task<RelayExchange> Entered => _entered.Task;

        public int Runs => Volatile.Read(ref _runs);

        public void Finish() => _finish.TrySetResult();

        public async ValueTask RunAsync(RelayExchange exchange)
        {
            Interlocked.Increment(ref _runs);
            if (sendHead)
            {
                exchange.ResponseHeadSent();
            }

            _entered.TrySetResult(exchange);
            await _finish.Task;
        }
    }
}
