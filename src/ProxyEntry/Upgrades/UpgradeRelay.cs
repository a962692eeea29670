using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Logging;
using Tunnel2.Protocol.Frames;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Heads;

namespace Tunnel2.ProxyEntry.Upgrades;

/// <summary>
/// The backend answered an upgrade request with 101: from then on the caller's connection and the stream carry raw
/// bytes both ways (a WebSocket, or any other protocol named in <c>Upgrade</c>), each way under its flow-control
/// window. The caller closing its sending side ends the exchange here: Kestrel takes an upgraded caller's FIN for the
/// connection's close (RequestAborted) and aborts its output, so what the backend still answers is lost. The backend
/// ending its side ends the exchange and closes the caller's connection, since Kestrel cannot half-close an upgraded
/// connection (YARP ends it the same way). A reset or a lost uplink aborts the caller's connection. Where the public
/// listener runs on the server's loop and hands callers over (<c>TunnelServer:Public:UpgradeRelay</c> = <c>Loop</c>), an
/// HTTP/1.1 upgrade's bytes move on that loop instead (<see cref="LoopUpgrades"/>), ending the same way, except that a
/// caller's FIN goes up as END_STREAM and the backend's answer to it still reaches the caller.
/// </summary>
internal sealed class UpgradeRelay
{
    private readonly ProxyEntryMetrics _metrics;
    private readonly PublicDrain _drain;
    private readonly ILogger _logger;

    public UpgradeRelay(ProxyEntryMetrics metrics, PublicDrain drain, ILogger<UpgradeRelay> logger)
    {
        _metrics = metrics;
        _drain = drain;
        _logger = logger;
    }

    public async Task RelayAsync(HttpContext context, IHttpExchange stream, string session, ResponseHead head)
    {
        bool extendedConnect = RequestHeadBuilder.IsExtendedConnect(context, out string? connectProtocol);
        ResponseHeadWriter.Apply(head, context.Response, extendedConnect);
        Stream connection;
        try
        {
            // HTTP/1.1: the connection switches after the 101. HTTP/2 (RFC 8441): the stream carries the bytes after a 200.
            connection = extendedConnect
                ? await context.Features.GetRequiredFeature<IHttpExtendedConnectFeature>().AcceptAsync()
                : await context.Features.GetRequiredFeature<IHttpUpgradeFeature>().UpgradeAsync();
        }
        catch (Exception ex) when (ex is IOException or InvalidOperationException or OperationCanceledException)
        {
            stream.Reset(ProtocolErrorCode.Cancelled);
            ProxyEntryLog.CallerGone(_logger, session, stream.Id, $"while switching protocols: {ex.Message}");
            _metrics.RequestFailed("caller-gone", ProxyEntryMetrics.ClientClosedRequest);
            return;
        }

        ProxyEntryLog.Upgraded(_logger, session, stream.Id, extendedConnect ? $"{connectProtocol} (HTTP/2 extended CONNECT)" : context.Response.Headers.Upgrade.ToString());
        _metrics.UpgradeStarted();
        _drain.UpgradeStarted();
        string reason = "closed";
        try
        {
            // Only an HTTP/1.1 connection is the caller's alone: an HTTP/2 one carries other streams.
            string? onLoop = extendedConnect ? null : await LoopUpgrades.RelayAsync(context, stream, _logger, session);
            reason = onLoop ?? await RelayBytesAsync(context, stream, connection);
        }
        finally
        {
            await connection.DisposeAsync();
            _drain.UpgradeEnded();
            _metrics.UpgradeEnded();
            ProxyEntryLog.UpgradeEnded(_logger, session, stream.Id, stream.SentBytes, stream.ReceivedBytes, reason);
        }
    }

    /// <returns>Why the relay ended, for the log line.</returns>
    /// <remarks>Each direction moves between the stream and the upgraded connection itself, with no pipe in between.</remarks>
    private static async Task<string> RelayBytesAsync(HttpContext context, IHttpExchange stream, Stream connection)
    {
        // No half-close: the backend's end ends the exchange, whatever the caller's side was doing.
        DuplexRelayResult result = await DuplexRelay.RunAsync(stream.AsByteStream(), RelayEnd.OfStream(connection), cancellationToken: context.RequestAborted);
        if (result.FromTunnel != RelayOutcome.Completed)
        {
            context.Abort(); // something broke: the caller sees its connection cut, not a clean end
            return context.RequestAborted.IsCancellationRequested ? "caller gone"
                : result.PeerReset is { } code ? $"stream reset ({code})"
                : "relay failed";
        }

        return result.FromLocal == RelayOutcome.Completed ? "closed" : "backend closed";
    }
}
