using Tunnel2.Protocol.Frames;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Failures;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Upgrades;

namespace Tunnel2.TunnelClient.Relay.Admission;

/// <summary>
/// The admission step, around the rest of the exchange: an upgrade request takes a place under
/// <c>MaxUpgradedStreams</c>, a request whose body is still trickling in waits for it (with <c>RequestBuffering</c>),
/// then the exchange takes a concurrency slot, queueing under <c>MaxQueue</c>. A refusal resets the stream as
/// overloaded. Both are given back here, on every path, once the steps after it (<c>next</c>: pick, attempt, retry)
/// are over; the slot earlier, as soon as the response head is out (<see cref="RelayExchange.ResponseHeadSent"/>), since
/// a long body, an SSE stream or a WebSocket must hold none. That early release goes back to this step through the
/// exchange (<see cref="IConcurrencySlots"/>), as Kestrel's connection limit lets an upgraded connection give back its
/// place through <c>IDecrementConcurrentConnectionCountFeature</c>, which the middleware that took it provides.
/// </summary>
internal sealed class RelayAdmission : IConcurrencySlots, IDisposable
{
    private static readonly RelayFailure UpgradeLimit =
        new(ProtocolErrorCode.Overloaded, "upgrade-limit", "too many upgraded streams (TunnelClient:Limits:MaxUpgradedStreams)");

    private static readonly RelayFailure QueueFull =
        new(ProtocolErrorCode.Overloaded, "queue-full", "too many requests waiting for a backend slot (TunnelClient:Limits:MaxQueue)");

    private readonly ConcurrencyGate _gate;
    private readonly UpgradeRelay _upgrades;
    private readonly FailureReporter _failures;
    private readonly bool _requestBuffering;
    private readonly Func<RelayExchange, ValueTask> _next;
    private readonly ILogger _logger;

    /// <param name="next">The steps an admitted exchange goes on to (the retry step: pick, attempt, retry).</param>
    public RelayAdmission(ConcurrencyGate gate, UpgradeRelay upgrades, FailureReporter failures, bool requestBuffering,
        Func<RelayExchange, ValueTask> next, ILogger<RelayAdmission> logger)
    {
        _gate = gate;
        _upgrades = upgrades;
        _failures = failures;
        _requestBuffering = requestBuffering;
        _next = next;
        _logger = logger;
    }

    /// <summary>Requests waiting for a concurrency slot right now.</summary>
    public int Queued => _gate.Queued;

    /// <summary>
    /// Admits the exchange and runs the steps after it, or refuses it (its stream reset). Whatever it took (the upgrade
    /// place, the slot) it gives back before it returns, whether the steps after it end, fail or throw.
    /// </summary>
    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask RunAsync(RelayExchange exchange)
    {
        if (exchange.IsUpgrade && !_upgrades.TryReserve())
        {
            TunnelClientLog.UpgradeRefused(_logger, exchange.Stream.Id, _upgrades.Count);
            _failures.Refuse(exchange, UpgradeLimit);
            return;
        }

        try
        {
            if (!await TryTakeSlotAsync(exchange))
            {
                return;
            }

            try
            {
                await _next(exchange);
            }
            finally
            {
                exchange.ReleaseSlot(); // the response head never went up (a failure, a reset), or nothing: given back once
            }
        }
        finally
        {
            if (exchange.IsUpgrade)
            {
                _upgrades.Release(); // switched or not
            }
        }
    }

    /// <summary>Gives one slot back: the one an exchange held until its response head went up or it ended.</summary>
    void IConcurrencySlots.Release() => _gate.Release();

    public void Dispose() => _gate.Dispose();

    /// <returns>True once the exchange holds its slot; false when it was refused (and its stream reset).</returns>
    private async ValueTask<bool> TryTakeSlotAsync(RelayExchange exchange)
    {
        if (_requestBuffering && exchange.HasBody)
        {
            // A slot is for a request that is ready to go: one whose body trickles in waits here, not in a slot.
            // A reset fails the stream's input, which ends this wait.
            await exchange.Stream.WaitForBodyOrFullWindowAsync(CancellationToken.None);
        }

        if (!_gate.TryEnter() && !await _gate.EnterAsync(exchange.Stream.Aborted))
        {
            TunnelClientLog.QueueFull(_logger, exchange.Stream.Id, _gate.Queued);
            _failures.Refuse(exchange, QueueFull);
            return false;
        }

        exchange.HoldSlot(this);
        return true;
    }
}
