using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.TunnelClient.Relay.Exchange;

/// <summary>
/// Sends the backend's response head up the stream: counts the answer (a run of failures on the backend is over),
/// adds the affinity cookie, rewrites the backend's own URLs into the public ones, and says the head is out
/// (<see cref="RelayExchange.ResponseHeadSent"/>), which gives the admission step's concurrency slot back: a long body,
/// an SSE stream or a WebSocket must hold none.
/// </summary>
internal sealed class ResponseHeadForwarder
{
    private readonly BackendSet _backends;
    private readonly TunnelClientStatus _status;
    private readonly TunnelClientMetrics _metrics;

    public ResponseHeadForwarder(BackendSet backends, TunnelClientStatus status, TunnelClientMetrics metrics)
    {
        _backends = backends;
        _status = status;
        _metrics = metrics;
    }

    /// <returns>Whether the backend switched protocols (the stream stays open for the new protocol's bytes).</returns>
    public bool Forward(RelayExchange exchange)
    {
        BackendResponseHead response = exchange.Response!;
        Backend backend = exchange.Backend;
        backend.OnAnswered();
        _status.OnRequestRelayed();
        _metrics.RequestRelayed();

        // The reader passes a 101 only to an upgrade request.
        bool switched = response.CloseCause == CloseCause.Upgraded;
        bool noBody = response.Framing == BodyFraming.None && !switched;
        if (_backends.UsesAffinityCookie)
        {
            _backends.SetAffinityCookie(response.Headers, exchange.Request, exchange.AffinityKey, backend);
        }

        backend.PathRewriter?.Rewrite(response.Headers, exchange.Request);
        exchange.Observer?.OnResponseHead(exchange);
        exchange.Stream.SendResponseHead(new ResponseHead(response.StatusCode, response.Headers), endStream: noBody);
        exchange.ResponseHeadSent();
        return switched;
    }
}
