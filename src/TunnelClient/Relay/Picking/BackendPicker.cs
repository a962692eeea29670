using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Picking;

/// <summary>
/// The pick step: the backend for the exchange (<see cref="BackendSet"/>'s strategy, affinity, health and ejection),
/// and after a failure the next one the request has not tried. It keeps each backend's count of exchanges in flight.
/// </summary>
internal sealed class BackendPicker
{
    private readonly BackendSet _backends;
    private readonly ILogger _logger;

    public BackendPicker(BackendSet backends, ILogger<BackendPicker> logger)
    {
        _backends = backends;
        _logger = logger;
    }

    public void Pick(RelayExchange exchange)
    {
        exchange.AffinityKey = _backends.AffinityKeyOf(exchange.Request);
        exchange.Backend = _backends.Pick(exchange.AffinityKey)!;
        exchange.Backend.ExchangeStarted();
    }

    /// <summary>
    /// Counts the failure toward the current backend's ejection and, while the request has a backend it has not tried,
    /// moves the exchange (and its count) to it; false once all are tried (at once with one backend).
    /// </summary>
    public bool TryMoveToAnother(RelayExchange exchange, string detail)
    {
        Backend failed = exchange.Backend;
        _backends.ReportUnreachable(failed);
        if (_backends.PickUntried(exchange.AffinityKey, failed, ref exchange.TriedBackends) is not { } next)
        {
            return false;
        }

        TunnelClientLog.BackendRetried(_logger, exchange.Stream.Id, failed.ToString(), detail, next.ToString());
        failed.ExchangeEnded();
        next.ExchangeStarted();
        exchange.Backend = next;
        exchange.AttemptOnBackend = 0;
        return true;
    }

    /// <summary>The exchange is over on its backend.</summary>
    public static void Release(RelayExchange exchange) => exchange.Backend.ExchangeEnded();
}
