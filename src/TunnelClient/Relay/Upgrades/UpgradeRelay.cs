using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Upgrades;

/// <summary>
/// The upgrade step. Before an upgrade request goes out the admission step takes a place for it under
/// <c>MaxUpgradedStreams</c> (and gives it back as the exchange ends); when the
/// backend answers 101, the connection carries the new protocol (a WebSocket, or any other byte stream) both ways until
/// one side ends it (<see cref="UpgradedStreams"/>), and is never reused.
/// </summary>
internal sealed class UpgradeRelay : IDisposable
{
    private readonly UpgradedStreams _streams;

    public UpgradeRelay(UpgradedStreams streams) => _streams = streams;

    /// <summary>Upgrade requests in flight and upgraded streams relaying now.</summary>
    public int Count => _streams.Count;

    /// <summary>Takes a place for an upgrade request; false at the cap.</summary>
    public bool TryReserve() => _streams.TryReserve();

    /// <summary>Gives an upgrade request's place back, switched or not.</summary>
    public void Release() => _streams.Release();

    public Task RelayAsync(RelayExchange exchange)
    {
        exchange.CloseCause = CloseCause.Upgraded;
        exchange.Observer?.OnUpgraded(exchange); // the list shows the upgrade now, not when the stream ends
        return _streams.RelayAsync(exchange.Stream, exchange.Connection!);
    }

    public void Dispose() => _streams.Dispose();
}
