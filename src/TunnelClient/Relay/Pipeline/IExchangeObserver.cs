using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>
/// Watches one exchange from outside the steps (the request inspector's <see cref="Inspection.ExchangeCapture"/>): the
/// steps record what happened on the <see cref="RelayExchange"/>, and tell the observer at three defined points only.
/// The bodies it sees through its taps, which the body pumps feed as the bytes pass.
/// </summary>
internal interface IExchangeObserver
{
    /// <summary>Sees the request body's bytes as they go to the backend.</summary>
    IBodyTap RequestBodyTap { get; }

    /// <summary>Sees the response body's bytes (without chunk framing) as they go up.</summary>
    IBodyTap ResponseBodyTap { get; }

    /// <summary>The response head, as it goes up (rewritten, cookie added): <see cref="RelayExchange.Response"/>.</summary>
    void OnResponseHead(RelayExchange exchange);

    /// <summary>The backend switched protocols: the exchange is shown now, not when the upgraded stream ends.</summary>
    void OnUpgraded(RelayExchange exchange);

    /// <summary>The exchange is over: its failure or cancellation, its backend and <c>Host</c> are final.</summary>
    void OnEnded(RelayExchange exchange);
}
