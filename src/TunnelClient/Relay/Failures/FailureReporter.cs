using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Failures;

/// <summary>
/// Ends an exchange that failed: the stream is reset with the failure's code (the server turns it into the caller's
/// status), the failure is counted by its reason and kept on the exchange for the inspector.
/// </summary>
internal sealed class FailureReporter
{
    private readonly TunnelClientMetrics _metrics;
    private readonly ILogger _logger;

    public FailureReporter(TunnelClientMetrics metrics, ILogger<FailureReporter> logger)
    {
        _metrics = metrics;
        _logger = logger;
    }

    /// <summary>A failure on the way to or from the backend (logged as such).</summary>
    public void Fail(RelayExchange exchange, RelayFailure failure)
    {
        TunnelClientLog.BackendFailed(_logger, exchange.Stream.Id, exchange.Request.Method, exchange.Request.Target, failure.Detail);
        Refuse(exchange, failure);
    }

    /// <summary>A refusal before any backend was tried (the caller of this logs its own line).</summary>
    public void Refuse(RelayExchange exchange, RelayFailure failure)
    {
        exchange.Failure = failure;
        _metrics.RequestFailed(failure.Reason);
        exchange.Stream.Reset(failure.Code);
    }
}
