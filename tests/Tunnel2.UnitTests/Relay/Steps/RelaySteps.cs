using Microsoft.Extensions.Logging.Abstractions;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Admission;
using Tunnel2.TunnelClient.Relay.Failures;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Upgrades;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Relay.Steps;

/// <summary>What the client's step tests build the same way: the admission step and an exchange on a real stream.</summary>
internal static class RelaySteps
{
    /// <param name="next">What an admitted exchange runs (the retry step in the client).</param>
    /// <param name="upgrades">The upgrade step whose places the admission step takes and gives back.</param>
    public static RelayAdmission Admission(TunnelClientMetrics metrics, int maxConcurrency, int maxQueue, int maxUpgrades,
        Func<RelayExchange, ValueTask> next, out UpgradeRelay upgrades)
    {
        upgrades = new UpgradeRelay(new UpgradedStreams(maxUpgrades, TimeSpan.FromMinutes(1), metrics, NullLogger.Instance));
        return new RelayAdmission(new ConcurrencyGate(maxConcurrency, maxQueue), upgrades, new FailureReporter(metrics, NullLogger<FailureReporter>.Instance),
            requestBuffering: false, next, NullLogger<RelayAdmission>.Instance);
    }

    /// <summary>A stream the server opens for <paramref name="head"/>, and the exchange the client starts for it.</summary>
    public static async Task<(UplinkStream Server, RelayExchange Exchange)> ExchangeAsync(UplinkPair uplinks, RequestHead head, Backend? backend = null)
    {
        (UplinkStream server, UplinkStream client) = await uplinks.OpenAsync(head, endStream: true);
        var exchange = new RelayExchange();
        exchange.Start(client, head, observer: null);
        if (backend is not null)
        {
            exchange.Backend = backend;
        }

        return (server, exchange);
    }
}
