using Microsoft.Extensions.Logging;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Problems;

namespace Tunnel2.ProxyEntry.Forwarding.Retry;

/// <summary>
/// The retry step around pick, forward and health: picks a client (<see cref="UplinkPicker"/>), makes one attempt on it
/// (<see cref="ForwardAttempt"/>), has its outcome counted on the member (<see cref="PassiveHealth"/>), and when the
/// attempt hands back a refusal that <see cref="RetryPermission"/> allowed, picks again (another client after a backend
/// failure). Without any client to pick, it tells the caller why.
/// </summary>
internal sealed class RetryPolicy
{
    private readonly UplinkPicker _picker;
    private readonly ForwardAttempt _attempt;
    private readonly PassiveHealth _health;
    private readonly FailureResponder _failures;
    private readonly PublicDrain _drain;
    private readonly ILogger _logger;

    public RetryPolicy(UplinkPicker picker, ForwardAttempt attempt, PassiveHealth health, FailureResponder failures, PublicDrain drain,
        ILogger<RetryPolicy> logger)
    {
        _picker = picker;
        _attempt = attempt;
        _health = health;
        _failures = failures;
        _drain = drain;
        _logger = logger;
    }

    public async Task ForwardAsync(ProxyExchange exchange)
    {
        UplinkPicker.ApplyPolicy(exchange);
        for (; ; exchange.Attempt++)
        {
#pragma warning disable CA2000 // an opened stream goes to ForwardAttempt.ForwardAsync, whose using disposes it on every path
            StreamOpenStatus status = _picker.OpenStream(exchange, out IHttpExchange? stream, out PickStatus pick);
#pragma warning restore CA2000
            if (stream is null)
            {
                ForwardingFailure? failure = NoStreamFailure(exchange, status, pick);
                await (failure is null
                    ? _failures.TunnelNotFoundAsync(exchange.Context, exchange.Route, exchange.BackendTarget)
                    : _failures.FailAsync(exchange.Context, streamId: 0, exchange.Session, failure.Value));
                exchange.SessionFound = failure is not null;
                return;
            }

            exchange.Retry = RetryPermission.For(exchange);
            SessionMember member = exchange.Member!;
            uint streamId = stream.Id; // the stream object serves another exchange once disposed
            AttemptOutcome outcome = await _attempt.ForwardAsync(exchange, stream);
            _health.Count(exchange, member, outcome);
            switch (outcome)
            {
                case AttemptOutcome.RetryAfterBackendFailure:
                    exchange.FailedMember = member;
                    ProxyEntryLog.RetryingOnAnotherClient(_logger, exchange.Session, streamId);
                    break;
                case AttemptOutcome.RetryAfterDrainingRefusal:
                    ProxyEntryLog.RetryingRefusedStream(_logger, exchange.Session, streamId);
                    break;
                default:
                    exchange.SessionFound = true;
                    return;
            }
        }
    }

    /// <summary>Why no stream opened; null when the session has no client at all (404, or 503 while warming up).</summary>
    private ForwardingFailure? NoStreamFailure(ProxyExchange exchange, StreamOpenStatus status, PickStatus pick) => status switch
    {
        StreamOpenStatus.HeadTooLarge => ForwardingFailure.HeadersTooLarge,
        StreamOpenStatus.AtStreamLimit => ForwardingFailure.StreamLimit,
        _ when _drain.IsDraining => ForwardingFailure.ServerDraining,
        _ when exchange.FailedMember is not null => ForwardingFailure.FromResetCode(ProtocolErrorCode.BackendConnectFailed),
        _ when pick == PickStatus.NoneReady => ForwardingFailure.NoReadyClient,
        _ => null,
    };
}
