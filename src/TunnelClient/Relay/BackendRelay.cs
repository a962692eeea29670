using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.EventLoops;
using Tunnel2.TunnelClient.Inspection;
using Tunnel2.TunnelClient.Relay.Admission;
using Tunnel2.TunnelClient.Relay.Attempt;
using Tunnel2.TunnelClient.Relay.Exchange;
using Tunnel2.TunnelClient.Relay.Failures;
using Tunnel2.TunnelClient.Relay.Picking;
using Tunnel2.TunnelClient.Relay.Pipeline;
using Tunnel2.TunnelClient.Relay.Retry;
using Tunnel2.TunnelClient.Relay.Shaping;
using Tunnel2.TunnelClient.Relay.Upgrades;

namespace Tunnel2.TunnelClient.Relay;

/// <summary>
/// Relays each stream the server opens to a backend, through the steps of the client's request path over one pooled
/// <see cref="RelayExchange"/>: admission (<see cref="RelayAdmission"/>: the upgrade cap, a concurrency slot, taken and
/// given back around the rest), then pick, attempt and retry (<see cref="RetryPolicy"/>, <see cref="RelayAttempt"/>).
/// Each step logs under its own category. An attempt speaks HTTP/1.1 on a
/// pooled keep-alive connection, full duplex (the request body keeps flowing while the response streams back, which
/// <c>SocketsHttpHandler</c> does not do on HTTP/1.1). Failures become a stream reset whose code tells the server which
/// status the caller gets. The request inspector, when on, observes the exchange (<see cref="IExchangeObserver"/>).
/// </summary>
public sealed class BackendRelay : IAsyncDisposable
{
    private readonly BackendSet _backends;
    private readonly RelayAdmission _admission;
    private readonly UpgradeRelay _upgrades;
    private readonly RelayExchangePool _exchanges = new();
    private readonly ILogger<BackendRelay> _logger;
    private readonly RequestInspector? _inspector;

    /// <param name="inspector">The request inspector, when <c>--inspect-url</c> turned it on.</param>
    /// <param name="loop">The client's event loop, which relays upgraded streams when <see cref="UpgradeLoop"/> picks it.</param>
    public BackendRelay(IOptions<TunnelClientOptions> options, BackendSet backends, TunnelClientStatus status, TunnelClientMetrics metrics, ILoggerFactory loggers,
        RequestInspector? inspector = null, ClientLoop? loop = null)
    {
        TunnelClientOptions settings = options.Value;
        _backends = backends;
        _logger = loggers.CreateLogger<BackendRelay>();
        _inspector = inspector;
        var failures = new FailureReporter(metrics, loggers.CreateLogger<FailureReporter>());
        _upgrades = new UpgradeRelay(new UpgradedStreams(settings.Limits.MaxUpgradedStreams, settings.Limits.UpgradedIdleTimeout, metrics,
            loggers.CreateLogger<UpgradedStreams>(), UpgradeLoop.Choose(settings, loop, loggers.CreateLogger<UpgradeLoop>())));
        var attempt = new RelayAttempt(new Http1Exchange(backends), new ResponseHeadForwarder(backends, status, metrics), _upgrades);
        var retry = new RetryPolicy(new BackendPicker(backends, loggers.CreateLogger<BackendPicker>()), attempt, failures);
        _admission = new RelayAdmission(new ConcurrencyGate(settings.Limits.MaxConcurrency, settings.Limits.MaxQueue), _upgrades, failures,
            settings.Backends.RequestBuffering, retry.RunAsync, loggers.CreateLogger<RelayAdmission>());
    }

    /// <summary>Requests waiting for a concurrency slot right now.</summary>
    public int QueuedRequests => _admission.Queued;

    /// <summary>Upgrade requests in flight and upgraded streams (WebSockets, …) relaying now.</summary>
    public int UpgradedStreams => _upgrades.Count;

    // One work item per stream rather than running every relay on the uplink's reader loop: measured, that kept much
    // less throughput, the reader thread doing every backend send while the other core idled
    // (docs/benchmarks/2026-11-23-performance.md, afternoon attempts). Only the batch's last request, when whole, starts
    // here (the uplink says so), which saves the hand-off of a lone small request (docs/benchmarks/2026-11-27-handoffs.md).
    // The same holds with the backend connections on the loop (TunnelClient:Backends:Relay=Loop): starting every whole
    // request of a batch there too kept the client's whole relay on one thread and lost saturated rate, while at a
    // moderate rate a batch holds one request anyway (docs/benchmarks/2026-11-30-multiloop.md).
    public void OnExchangeOpened(IHttpExchange stream)
    {
        if (stream.MayStartOnReader)
        {
            _ = RelayAsync(stream);
            return;
        }

        ThreadPool.UnsafeQueueUserWorkItem(static state => _ = state.Relay.RelayAsync(state.Stream), (Relay: this, Stream: stream), preferLocal: false);
    }

    // The backends and their pools belong to the container (BackendSet is a singleton of its own).
    public ValueTask DisposeAsync()
    {
        _admission.Dispose();
        _upgrades.Dispose();
        return ValueTask.CompletedTask;
    }

    // No cancellation token on the usual path: a token would mean a CancellationTokenSource per request and a
    // registration per read. A reset reaches the backend connection through its abort listener instead, which ends
    // its reads and writes; only the rare waits (a queued slot, a new connection) take the stream's token.
    private async Task RelayAsync(IHttpExchange stream)
    {
        // What the backend is asked from here on (the inspector keeps that too): with --path-prefix keep, the path as the caller sent it.
        RequestHead request = _backends.KeepsPathPrefix ? PrefixKeeping.Restore(stream.RequestHead!) : stream.RequestHead!;
        RelayExchange exchange = _exchanges.Rent();
        exchange.Start(stream, request, _inspector?.Begin(request));
        try
        {
            await _admission.RunAsync(exchange);
        }
        catch (Exception ex) when (stream.IsAborted || ex is UplinkClosedException or StreamResetException)
        {
            TunnelClientLog.StreamCancelled(_logger, stream.Id, ex.Message);
            exchange.CancelDetail = ex.Message;
        }
        catch (Exception ex)
        {
            TunnelClientLog.RelayCrashed(_logger, stream.Id, ex);
            exchange.Failure ??= new RelayFailure(ProtocolErrorCode.InternalError, "internal error", ex.Message);
            stream.Reset(ProtocolErrorCode.InternalError);
        }
        finally
        {
            exchange.Observer?.OnEnded(exchange);
            stream.Dispose();
            _exchanges.Return(exchange);
        }
    }
}
