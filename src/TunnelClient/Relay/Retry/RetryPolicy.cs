using System.Diagnostics;
using System.Runtime.CompilerServices;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Attempt;
using Tunnel2.TunnelClient.Relay.Failures;
using Tunnel2.TunnelClient.Relay.Picking;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Retry;

/// <summary>
/// The retry step around pick and attempt: picks a backend, makes one attempt on it, and when the attempt failed in a
/// way <see cref="BackendRetryRule"/> allows to retry, tries again (on a fresh connection, or on a backend the request
/// has not tried). A failure that is not retried is reported here. The exchange's count on its backend ends with it.
/// </summary>
internal sealed class RetryPolicy
{
    private const string ClosedWithoutAnswering = "closed without answering";

    private readonly BackendPicker _picker;
    private readonly RelayAttempt _attempt;
    private readonly FailureReporter _failures;

    public RetryPolicy(BackendPicker picker, RelayAttempt attempt, FailureReporter failures)
    {
        _picker = picker;
        _attempt = attempt;
        _failures = failures;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask RunAsync(RelayExchange exchange)
    {
        _picker.Pick(exchange);
        using Activity? activity = RelayActivity.Start(exchange.Request);
        try
        {
            while (true)
            {
                AttemptResult result = await _attempt.RunAsync(exchange);
                if (Retries(exchange, result))
                {
                    continue;
                }

                if (result.Failure is { } failure)
                {
                    _failures.Fail(exchange, failure);
                }

                return;
            }
        }
        finally
        {
            activity?.SetTag(RelayActivity.BackendTag, exchange.Backend.ToString());
            BackendPicker.Release(exchange);
        }
    }

    /// <summary>Whether the exchange goes on with another attempt (on the same backend, or moved to another).</summary>
    private bool Retries(RelayExchange exchange, in AttemptResult result)
    {
        switch (BackendRetryRule.Decide(exchange, result.Outcome))
        {
            case RetryDecision.SameBackend:
                exchange.AttemptOnBackend++;
                return true;
            case RetryDecision.AnotherBackend:
                string detail = result.Outcome == AttemptOutcome.ClosedWithoutAnswer ? ClosedWithoutAnswering : result.Failure!.Value.Detail;
                return _picker.TryMoveToAnother(exchange, detail);
            default:
                return false;
        }
    }
}
