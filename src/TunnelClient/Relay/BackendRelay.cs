using System.Net;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Uplinks;

namespace Tunnel2.TunnelClient.Relay;

/// <summary>
/// Relays each stream the server opens to the backend: waits for a concurrency slot, sends the request with a pooled
/// <see cref="HttpMessageInvoker"/>, answers with the response head and streams the body back. Failures become a
/// stream reset whose code tells the server which status to give the caller.
/// </summary>
public sealed class BackendRelay : IUplinkStreamHandler, IDisposable
{
    private readonly HttpMessageInvoker _backend;
    private readonly ConcurrencyGate _gate;
    private readonly string _backendBase;
    private readonly TunnelClientStatus _status;
    private readonly TunnelClientMetrics _metrics;
    private readonly ILogger<BackendRelay> _logger;

    public BackendRelay(IOptions<TunnelClientOptions> options, TunnelClientStatus status, TunnelClientMetrics metrics, ILogger<BackendRelay> logger)
    {
        TunnelClientOptions settings = options.Value;
        _backendBase = settings.Backend.TrimEnd('/');
        _gate = new ConcurrencyGate(settings.MaxConcurrency, settings.MaxQueue);
        _status = status;
        _metrics = metrics;
        _logger = logger;
        _backend = new HttpMessageInvoker(new SocketsHttpHandler
        {
            UseProxy = false,
            AllowAutoRedirect = false,
            AutomaticDecompression = DecompressionMethods.None,
            UseCookies = false,
            ActivityHeadersPropagator = null, // the request reaches the backend as the caller sent it
            ConnectTimeout = TimeSpan.FromSeconds(10),
            PooledConnectionIdleTimeout = TimeSpan.FromMinutes(1),
            MaxConnectionsPerServer = int.MaxValue, // the gate is the limit
        }, disposeHandler: true);
    }

    public void OnStreamOpened(UplinkStream stream) =>
        ThreadPool.UnsafeQueueUserWorkItem(static state => _ = state.Relay.RelayAsync(state.Stream), (Relay: this, Stream: stream), preferLocal: false);

    public void Dispose()
    {
        _backend.Dispose();
        _gate.Dispose();
    }

    private async Task RelayAsync(UplinkStream stream)
    {
        try
        {
            CancellationToken aborted = stream.Aborted;
            if (!await _gate.EnterAsync(aborted))
            {
                TunnelClientLog.QueueFull(_logger, stream.Id, _gate.Queued);
                _metrics.RequestFailed("queue-full");
                stream.Reset(ProtocolErrorCode.Overloaded);
                return;
            }

            try
            {
                await ForwardAsync(stream, aborted);
            }
            finally
            {
                _gate.Release();
            }
        }
        catch (Exception ex) when (stream.Aborted.IsCancellationRequested || ex is UplinkClosedException or StreamResetException)
        {
            TunnelClientLog.StreamCancelled(_logger, stream.Id, ex.Message);
        }
        catch (Exception ex)
        {
            TunnelClientLog.RelayCrashed(_logger, stream.Id, ex);
            stream.Reset(ProtocolErrorCode.InternalError);
        }
        finally
        {
            stream.Dispose();
        }
    }

    private async Task ForwardAsync(UplinkStream stream, CancellationToken aborted)
    {
        Protocol.Heads.RequestHead head = stream.RequestHead!;
        using HttpRequestMessage request = BackendMessages.CreateRequest(stream, head, _backendBase, stream.RequestHasBody);
        HttpResponseMessage response;
        try
        {
            response = await _backend.SendAsync(request, aborted);
        }
        catch (HttpRequestException ex) when (!aborted.IsCancellationRequested)
        {
            TunnelClientLog.BackendFailed(_logger, stream.Id, head.Method, head.Target, ex.Message);
            _metrics.RequestFailed("backend-unreachable");
            stream.Reset(ProtocolErrorCode.BackendUnreachable);
            return;
        }

        using (response)
        {
            _status.OnRequestRelayed();
            _metrics.RequestRelayed();
            bool noBody = BackendMessages.HasNoBody(head, response);
            stream.SendResponseHead(BackendMessages.CreateResponseHead(response), endStream: noBody);
            if (noBody)
            {
                return;
            }

            Stream body = await response.Content.ReadAsStreamAsync(aborted);
            try
            {
                await stream.SendBodyAsync(body, aborted);
            }
            catch (Exception ex) when (ex is IOException or HttpRequestException && ex is not UplinkClosedException and not StreamResetException
                                       && !aborted.IsCancellationRequested)
            {
                TunnelClientLog.BackendFailed(_logger, stream.Id, head.Method, head.Target, $"response body cut short: {ex.Message}");
                _metrics.RequestFailed("backend-aborted");
                stream.Reset(ProtocolErrorCode.BackendAborted);
            }
        }
    }
}
