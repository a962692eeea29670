using Tunnel2.Protocol.Frames;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Failures;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Upgrades;

namespace Tunnel2.TunnelClient.Relay.Admission;

/// <summary>
/// The admission step: an upgrade request takes a place under <c>MaxUpgradedStreams</c>, a request whose body is still
/// trickling in waits for it (with <c>RequestBuffering</c>), then the exchange takes a concurrency slot, queueing under
/// <c>MaxQueue</c>. A refusal resets the stream as overloaded. The slot goes back once the response head is out.
/// </summary>
internal sealed class RelayAdmission : IDisposable
{
    private static readonly RelayFailure UpgradeLimit =
        new(ProtocolErrorCode.Overloaded, "upgrade-limit", "too many upgraded streams (TunnelClient:MaxUpgradedStreams)");

    private static readonly RelayFailure QueueFull =
        new(ProtocolErrorCode.Overloaded, "queue-full", "too many requests waiting for a backend slot (TunnelClient:MaxQueue)");

    private readonly ConcurrencyGate _gate;
    private readonly UpgradeRelay _upgrades;
    private readonly FailureReporter _failures;
    private readonly bool _requestBuffering;
    private readonly ILogger _logger;

    public RelayAdmission(ConcurrencyGate gate, UpgradeRelay upgrades, FailureReporter failures, bool requestBuffering, ILogger<BackendRelay> logger)
    {
        _gate = gate;
        _upgrades = upgrades;
        _failures = failures;
        _requestBuffering = requestBuffering;
        _logger = logger;
    }

    /// <summary>Requests waiting for a concurrency slot right now.</summary>
    public int Queued => _gate.Queued;

    /// <returns>True once the exchange holds its slot; false when it was refused (and its stream reset).</returns>
    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<bool> TryAdmitAsync(RelayExchange exchange)
    {
        if (exchange.IsUpgrade && !_upgrades.TryReserve(exchange))
        {
            TunnelClientLog.UpgradeRefused(_logger, exchange.Stream.Id, _upgrades.Count);
            _failures.Refuse(exchange, UpgradeLimit);
            return false;
        }

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

        exchange.SlotHeld = true;
        return true;
    }

    /// <summary>Gives the exchange's slot back, when it still holds one.</summary>
    public void ReleaseSlot(RelayExchange exchange)
    {
        if (exchange.SlotHeld)
        {
            exchange.SlotHeld = false;
            _gate.Release();
        }
    }

    public void Dispose() => _gate.Dispose();
}
