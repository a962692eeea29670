using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Admission;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Steps;

/// <summary>The client's admission step on its own: the concurrency slot, its queue, and the cap on upgrades.</summary>
public sealed class RelayAdmissionTests : IAsyncDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly UplinkPair _uplinks = UplinkPair.Start();
    private readonly TunnelClientMetrics _metrics;

    public RelayAdmissionTests() => _metrics = new TunnelClientMetrics(_services.GetRequiredService<IMeterFactory>());

    public async ValueTask DisposeAsync()
    {
        await _uplinks.DisposeAsync();
        await _services.DisposeAsync();
    }

    [Fact]
    public async Task An_exchange_takes_the_one_slot_a_second_finds_no_queue_and_its_stream_is_reset_as_overloaded()
    {
        using RelayAdmission admission = Admission(maxConcurrency: 1, maxQueue: 0, maxUpgrades: 10);
        (UplinkStream _, RelayExchange first) = await ExchangeAsync(Get());
        (UplinkStream secondServer, RelayExchange second) = await ExchangeAsync(Get());

        Assert.True(await admission.TryAdmitAsync(first));
        Assert.True(first.SlotHeld);
        Assert.False(await admission.TryAdmitAsync(second));

        Assert.False(second.SlotHeld);
        Assert.Equal("queue-full", second.Failure?.Reason);
        StreamResetException reset = await Assert.ThrowsAsync<StreamResetException>(() => secondServer.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(ProtocolErrorCode.Overloaded, reset.ErrorCode);
    }

    [Fact]
    public async Task A_slot_given_back_admits_the_next_exchange_and_is_given_back_only_once()
    {
        using RelayAdmission admission = Admission(maxConcurrency: 1, maxQueue: 0, maxUpgrades: 10);
        (UplinkStream _, RelayExchange first) = await ExchangeAsync(Get());
        (UplinkStream _, RelayExchange second) = await ExchangeAsync(Get());
        (UplinkStream _, RelayExchange third) = await ExchangeAsync(Get());
        Assert.True(await admission.TryAdmitAsync(first));

        admission.ReleaseSlot(first);
        admission.ReleaseSlot(first); // a second release must not free a slot that another exchange holds

        Assert.False(first.SlotHeld);
        Assert.True(await admission.TryAdmitAsync(second));
        Assert.False(await admission.TryAdmitAsync(third));
    }

    [Fact]
    public async Task A_queued_exchange_gets_the_slot_when_it_is_given_back()
    {
        using RelayAdmission admission = Admission(maxConcurrency: 1, maxQueue: 1, maxUpgrades: 10);
        (UplinkStream _, RelayExchange first) = await ExchangeAsync(Get());
        (UplinkStream _, RelayExchange second) = await ExchangeAsync(Get());
        Assert.True(await admission.TryAdmitAsync(first));

        ValueTask<bool> waiting = admission.TryAdmitAsync(second);
        Assert.False(waiting.IsCompleted);
        Assert.Equal(1, admission.Queued);
        admission.ReleaseSlot(first);

        Assert.True(await waiting.AsTask().WithTimeout());
        Assert.True(second.SlotHeld);
    }

    [Fact]
    public async Task An_upgrade_beyond_the_cap_is_refused_before_it_takes_a_slot()
    {
        using RelayAdmission admission = Admission(maxConcurrency: 10, maxQueue: 0, maxUpgrades: 0);
        (UplinkStream server, RelayExchange upgrade) = await ExchangeAsync(
            new RequestHead("GET", "/socket", [new HeaderField("Connection", "Upgrade"), new HeaderField("Upgrade", "websocket")]));
        Assert.True(upgrade.IsUpgrade);

        Assert.False(await admission.TryAdmitAsync(upgrade));

        Assert.False(upgrade.SlotHeld);
        Assert.False(upgrade.UpgradeReserved);
        Assert.Equal("upgrade-limit", upgrade.Failure?.Reason);
        StreamResetException reset = await Assert.ThrowsAsync<StreamResetException>(() => server.ReadResponseHeadAsync().WithTimeout());
        Assert.Equal(ProtocolErrorCode.Overloaded, reset.ErrorCode);
    }

    private RelayAdmission Admission(int maxConcurrency, int maxQueue, int maxUpgrades) =>
        RelaySteps.Admission(_metrics, maxConcurrency, maxQueue, maxUpgrades);

    private static RequestHead Get() => new("GET", "/", []);

    private Task<(UplinkStream Server, RelayExchange Exchange)> ExchangeAsync(RequestHead head) => RelaySteps.ExchangeAsync(_uplinks, head);
}
