using System.Runtime.CompilerServices;
using Tunnel2.TunnelClient.Relay.Bodies;
using Tunnel2.TunnelClient.Relay.Exchange;
using Tunnel2.TunnelClient.Relay.Leasing;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Upgrades;

namespace Tunnel2.TunnelClient.Relay.Attempt;

/// <summary>
/// One attempt at the exchange on the backend it was given: lease a connection (<see cref="ConnectionLease"/>), send
/// the head and read the answer's (<see cref="Http1Exchange"/>), send that head up (<see cref="ResponseHeadForwarder"/>),
/// then the bodies (<see cref="BodyPump"/>) or, after a 101, the upgraded stream (<see cref="UpgradeRelay"/>). It never
/// retries: a failure comes back as a value, for <see cref="Retry.RetryPolicy"/> to judge.
/// </summary>
internal sealed class RelayAttempt
{
    private readonly Http1Exchange _http1;
    private readonly ResponseHeadForwarder _responseHead;
    private readonly UpgradeRelay _upgrades;

    public RelayAttempt(Http1Exchange http1, ResponseHeadForwarder responseHead, UpgradeRelay upgrades)
    {
        _http1 = http1;
        _responseHead = responseHead;
        _upgrades = upgrades;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<AttemptResult> RunAsync(RelayExchange exchange)
    {
        if (await ConnectionLease.LeaseAsync(exchange) is { } unreachable)
        {
            return new AttemptResult(AttemptOutcome.ConnectFailed, unreachable);
        }

        try
        {
            AttemptResult head = await _http1.SendAndReadHeadAsync(exchange);
            if (head.Outcome != AttemptOutcome.Answered)
            {
                return head;
            }

            if (_responseHead.Forward(exchange))
            {
                await _upgrades.RelayAsync(exchange);
                return AttemptResult.Done;
            }

            return await BodyPump.PumpAsync(exchange);
        }
        finally
        {
            await ConnectionLease.ReturnAsync(exchange);
        }
    }
}
