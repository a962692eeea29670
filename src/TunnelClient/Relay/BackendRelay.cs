using System.Diagnostics;
using System.Net.Sockets;
using System.Security.Authentication;
using Microsoft.Extensions.Options;
using Tunnel2.Balancing.Retry;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Hosting.Tracing;
using Tunnel2.TunnelClient.Backends;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Inspection;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Shaping;
using Tunnel2.TunnelClient.Relay.Upgrades;
using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.TunnelClient.Relay;

/// <summary>
/// Relays each stream the server opens to a backend (<see cref="BackendSet"/> picks one when there are several): waits
/// for a concurrency slot, then speaks HTTP/1.1 on a pooled keep-alive connection, full duplex (the request body keeps
/// flowing while the response streams back, which <c>SocketsHttpHandler</c> does not do on HTTP/1.1). The slot is given
/// back once the response head is out: a long body, an SSE stream or a WebSocket holds none. An upgrade request answered 101 becomes an upgraded stream
/// (<see cref="UpgradedStreams"/>). Failures become a stream reset whose code tells the server which status the caller gets.
/// </summary>
public sealed class BackendRelay : IUplinkStreamHandler, IAsyncDisposable
{
    private readonly BackendSet _backends;
    private readonly ConcurrencyGate _gate;
    private readonly UpgradedStreams _upgrades;
    private readonly bool _requestBuffering;
    private readonly TunnelClientStatus _status;
    private readonly TunnelClientMetrics _metrics;
    private readonly ILogger<BackendRelay> _logger;
    private readonly RequestInspector? _inspector;

    /// <param name="inspector">The request inspector, when <c>--inspect-url</c> turned it on.</param>
    public BackendRelay(IOptions<TunnelClientOptions> options, BackendSet backends, TunnelClientStatus status, TunnelClientMetrics metrics, ILogger<BackendRelay> logger,
        RequestInspector? inspector = null)
    {
        _inspector = inspector;
        TunnelClientOptions settings = options.Value;
        _backends = backends;
        _requestBuffering = settings.RequestBuffering;
        _gate = new ConcurrencyGate(settings.MaxConcurrency, settings.MaxQueue);
        _upgrades = new UpgradedStreams(settings.MaxUpgradedStreams, settings.UpgradedIdleTimeout, metrics, logger);
        _status = status;
        _metrics = metrics;
        _logger = logger;
    }

    /// <summary>Requests waiting for a concurrency slot right now.</summary>
    public int QueuedRequests => _gate.Queued;

    /// <summary>Upgrade requests in flight and upgraded streams (WebSockets, …) relaying now.</summary>
    public int UpgradedStreams => _upgrades.Count;

    // One work item per stream rather than running every relay on the uplink's reader loop: measured, that kept 0.63x
    // the throughput, the reader thread doing every backend send while the other core idled
    // (docs/benchmarks/2026-11-23-performance.md). Only the batch's last request, when whole, starts here (the uplink
    // says so), which saves the hand-off of a lone small request (docs/benchmarks/2026-11-27-handoffs.md).
    public void OnStreamOpened(UplinkStream stream)
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
        _gate.Dispose();
        _upgrades.Dispose();
        return ValueTask.CompletedTask;
    }

    // No cancellation token on the usual path: a token would mean a CancellationTokenSource per request and a
    // registration per read. A reset reaches the backend connection through its abort listener instead, which ends
    // its reads and writes; only the rare waits (a queued slot, a new connection) take the stream's token.
    private async Task RelayAsync(UplinkStream stream)
    {
        // An upgrade request has no body: its stream stays open for the bytes that follow a 101.
        // What the backend is asked from here on (the inspector keeps that too): with --path-prefix keep, the path as the caller sent it.
        RequestHead request = _backends.KeepsPathPrefix ? PrefixKeeping.Restore(stream.RequestHead!) : stream.RequestHead!;
        bool upgrade = request.IsUpgrade;
        bool upgradeReserved = false;
        ExchangeCapture? capture = _inspector?.Begin(request);
        try
        {
            if (upgrade && !(upgradeReserved = _upgrades.TryReserve()))
            {
                TunnelClientLog.UpgradeRefused(_logger, stream.Id, _upgrades.Count);
                _metrics.RequestFailed("upgrade-limit");
                capture?.Fail("upgrade-limit: too many upgraded streams (TunnelClient:MaxUpgradedStreams)");
                stream.Reset(ProtocolErrorCode.Overloaded);
                return;
            }

            if (_requestBuffering && stream.RequestHasBody && !upgrade)
            {
                // A slot is for a request that is ready to go: one whose body trickles in waits here, not in a slot.
                // A reset fails the stream's input, which ends this wait.
                await stream.WaitForBodyOrFullWindowAsync(CancellationToken.None);
            }

            if (!_gate.TryEnter() && !await _gate.EnterAsync(stream.Aborted))
            {
                TunnelClientLog.QueueFull(_logger, stream.Id, _gate.Queued);
                _metrics.RequestFailed("queue-full");
                capture?.Fail("queue-full: too many requests waiting for a backend slot (TunnelClient:MaxQueue)");
                stream.Reset(ProtocolErrorCode.Overloaded);
                return;
            }

            await ForwardAsync(stream, request, upgrade, capture);
        }
        catch (Exception ex) when (stream.IsAborted || ex is UplinkClosedException or StreamResetException)
        {
            TunnelClientLog.StreamCancelled(_logger, stream.Id, ex.Message);
            capture?.Cancel(ex.Message);
        }
        catch (Exception ex)
        {
            TunnelClientLog.RelayCrashed(_logger, stream.Id, ex);
            capture?.Fail($"internal error: {ex.Message}");
            stream.Reset(ProtocolErrorCode.InternalError);
        }
        finally
        {
            if (capture is not null)
            {
                if (stream.IsAborted)
                {
                    capture.Cancel("the stream was reset (the caller went away, or the uplink closed)");
                }

                capture.Complete();
            }

            if (upgradeReserved)
            {
                _upgrades.Release();
            }

            stream.Dispose();
        }
    }

    /// <summary>
    /// Runs the exchange in the concurrency slot <see cref="RelayAsync"/> took, and gives the slot back as soon as the
    /// response head is out; an exchange that ends before that gives it back at its end.
    /// </summary>
    private async Task ForwardAsync(UplinkStream stream, RequestHead request, bool upgrade, ExchangeCapture? capture)
    {
        bool isHead = request.Method == "HEAD";
        bool requestHasBody = stream.RequestHasBody && !upgrade;
        bool slotHeld = true;
        string? affinityKey = _backends.AffinityKeyOf(request);
        Backend backend = _backends.Pick(affinityKey)!;
        backend.ExchangeStarted();
        using Activity? activity = StartRelayActivity(request);
        ulong tried = 0; // the backends this request has failed on, a bit each
        try
        {
            for (int attempt = 0; ; attempt++)
            {
                bool reused = true;
                if (!backend.Pool.TryRentIdle(stream.Id, out BackendConnection? connection))
                {
                    reused = false;
                    try
                    {
                        connection = await backend.ConnectAsync(stream.Aborted);
                    }
                    catch (Exception ex) when (!stream.IsAborted
                                               && ex is SocketException or IOException or AuthenticationException or OperationCanceledException)
                    {
                        // Nothing reached the backend, so another may take the request, body or not: each of this
                        // client's backends once, then a version-4 server may try it on another client.
                        if (MoveToAnotherBackend(stream, affinityKey, backend, ex.Message, ref tried) is { } next)
                        {
                            (backend, attempt) = (next, -1);
                            continue;
                        }

                        ProtocolErrorCode code = stream.Uplink.Settings.ProtocolVersion >= HandshakeProtocol.HealthVersion
                            ? ProtocolErrorCode.BackendConnectFailed
                            : ProtocolErrorCode.BackendUnreachable;
                        Fail(stream, request, code, "backend-unreachable", ex.Message, capture);
                        return;
                    }
                }

                // From here a reset ends the connection's I/O; it is then closed, never reused.
                stream.SetAbortListener(connection);

                // Whatever ends this exchange early leaves the connection in an unknown state: only a clean end clears it.
                CloseCause? closeCause = CloseCause.ExchangeFailed;
                try
                {
                    bool chunked;
                    try
                    {
                        string host = _backends.HostHeader.For(request.Headers, backend.Host);
                        capture?.SetHost(host);
                        chunked = RequestWriter.WriteHead(connection.Output, request, host, requestHasBody, upgrade);
                    }
                    catch (InvalidDataException ex)
                    {
                        Fail(stream, request, ProtocolErrorCode.ProtocolError, "invalid-request-head", ex.Message, capture);
                        return;
                    }

                    Task requestBody = requestHasBody
                        ? stream.CopyInputToAsync(connection.Output, chunked, capture?.RequestBody, CancellationToken.None)
                        : connection.Output.FlushAsync(CancellationToken.None).AsTask();

                    BackendResponseHead? response;
                    try
                    {
                        response = await ResponseHeadReader.ReadAsync(connection.Input, connection.TakeReadAhead(), isHead, upgrade, CancellationToken.None);
                    }
                    catch (Exception ex) when (!stream.IsAborted && ex is IOException or InvalidDataException or SocketException)
                    {
                        Observe(requestBody);
                        if (RetryRule.MayTryAnother(AttemptFailure.Unanswered, request.Method, requestHasBody, upgrade) && MoveToAnotherBackend(stream, affinityKey, backend, ex.Message, ref tried) is { } next)
                        {
                            (backend, attempt) = (next, -1);
                            continue;
                        }

                        // A malformed answer is the backend's fault but not unreachability: it must not count towards
                        // passing this client over (that would turn one bad answer among good ones into 503s for all).
                        if (ex is InvalidDataException)
                        {
                            Fail(stream, request, ProtocolErrorCode.BackendAborted, "backend-malformed", ex.Message, capture);
                        }
                        else
                        {
                            Fail(stream, request, ProtocolErrorCode.BackendUnreachable, "backend-failed", ex.Message, capture);
                        }

                        return;
                    }

                    if (response is null)
                    {
                        Observe(requestBody);
                        if (stream.IsAborted)
                        {
                            return; // the end of stream was the abort listener's doing
                        }

                        if (reused && !requestHasBody && attempt == 0)
                        {
                            continue; // a keep-alive connection the backend closed while idle: one fresh try is safe
                        }

                        if (RetryRule.MayTryAnother(AttemptFailure.Unanswered, request.Method, requestHasBody, upgrade)
                            && MoveToAnotherBackend(stream, affinityKey, backend, "closed without answering", ref tried) is { } next)
                        {
                            (backend, attempt) = (next, -1);
                            continue;
                        }

                        Fail(stream, request, ProtocolErrorCode.BackendUnreachable, "backend-closed", "the backend closed the connection without answering", capture);
                        return;
                    }

                    backend.OnAnswered();
                    _status.OnRequestRelayed();
                    _metrics.RequestRelayed();
                    // The reader passes a 101 only to an upgrade request; its stream stays open for the new protocol's bytes.
                    bool switched = response.CloseCause == CloseCause.Upgraded;
                    bool noBody = response.Framing == BodyFraming.None && !switched;
                    if (_backends.UsesAffinityCookie)
                    {
                        _backends.SetAffinityCookie(response.Headers, request, affinityKey, backend);
                    }

                    backend.PathRewriter?.Rewrite(response.Headers, request);
                    capture?.OnResponseHead(response.StatusCode, response.Headers);
                    stream.SendResponseHead(new ResponseHead(response.StatusCode, response.Headers), endStream: noBody);
                    slotHeld = false;
                    _gate.Release();
                    if (switched)
                    {
                        // The connection now carries the new protocol until one side ends it; it is never reused.
                        closeCause = CloseCause.Upgraded;
                        capture?.Complete(); // the list shows the upgrade now, not when the WebSocket ends
                        await _upgrades.RelayAsync(stream, connection);
                        return;
                    }

                    if (!noBody)
                    {
                        try
                        {
                            if (ResponseBodyPump.MayTakeLong(response))
                            {
                                await connection.ReleaseWriteBufferAsync();
                            }

                            await ResponseBodyPump.SendAsync(stream, connection.Input, connection.Stream, response, capture?.ResponseBody, CancellationToken.None);
                        }
                        catch (Exception ex) when (!stream.IsAborted && ex is IOException or InvalidDataException or SocketException
                                                   && ex is not UplinkClosedException and not StreamResetException)
                        {
                            Observe(requestBody);
                            Fail(stream, request, ProtocolErrorCode.BackendAborted, "backend-aborted", $"response body cut short: {ex.Message}", capture);
                            return;
                        }
                    }

                    // An answer that came before the whole upload leaves the connection mid-request: it cannot be reused.
                    closeCause = response.CloseCause ?? (requestBody.IsCompletedSuccessfully ? null : CloseCause.RequestBodyUnfinished);
                    if (!requestBody.IsCompleted)
                    {
                        Observe(requestBody);
                    }

                    return;
                }
                finally
                {
                    if (stream.ClearAbortListener())
                    {
                        closeCause ??= CloseCause.ExchangeFailed;
                    }

                    await backend.Pool.ReturnOrCloseAsync(connection, closeCause, stream.Id);
                }
            }
        }
        finally
        {
            activity?.SetTag("tunnel2.backend", backend.ToString());
            capture?.SetBackend(backend.ToString());
            backend.ExchangeEnded();
            if (slotHeld)
            {
                _gate.Release();
            }
        }
    }

    /// <summary>
    /// The client's span for one request, when a tracer listens: a child of the server's span named in the stream's
    /// <c>traceparent</c>, and the parent the backend sees in its place.
    /// </summary>
    private static Activity? StartRelayActivity(RequestHead request)
    {
        if (!TunnelClientTracing.Source.HasListeners())
        {
            return null;
        }

        Activity? activity = TunnelClientTracing.Source.StartActivity(TunnelClientTracing.RelaySpan, ActivityKind.Server, TraceContext.ParentOf(request.Headers));
        if (activity is not null)
        {
            TraceContext.Inject(request.Headers, activity);
        }

        return activity;
    }

    /// <summary>
    /// Counts the failure toward <paramref name="failed"/>'s ejection and, while the request has a backend it has not
    /// tried, moves the exchange's count to it and returns it; null once all are tried (at once with one backend).
    /// </summary>
    private Backend? MoveToAnotherBackend(UplinkStream stream, string? affinityKey, Backend failed, string detail, ref ulong tried)
    {
        _backends.ReportUnreachable(failed);
        if (_backends.PickUntried(affinityKey, failed, ref tried) is not { } next)
        {
            return null;
        }

        TunnelClientLog.BackendRetried(_logger, stream.Id, failed.ToString(), detail, next.ToString());
        failed.ExchangeEnded();
        next.ExchangeStarted();
        return next;
    }

    private void Fail(UplinkStream stream, RequestHead request, ProtocolErrorCode code, string reason, string detail, ExchangeCapture? capture)
    {
        TunnelClientLog.BackendFailed(_logger, stream.Id, request.Method, request.Target, detail);
        capture?.Fail($"{reason}: {detail}");
        _metrics.RequestFailed(reason);
        stream.Reset(code);
    }

    /// <summary>A request-body pump left behind when the exchange ended: its failure is expected and must not go unobserved.</summary>
    private static void Observe(Task task) =>
        task.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
}
