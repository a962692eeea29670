namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>How one attempt ended: over (answered or failed), or to be retried on another client, and why.</summary>
internal enum ExchangeOutcome
{
    Done,
    RefusedByDrainingClient,
    /// <summary>The client's backend could not be reached, or failed before answering an idempotent request.</summary>
    BackendFailed,
}
