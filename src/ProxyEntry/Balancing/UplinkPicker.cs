using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Diagnostics;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>
/// The pick step: one of the session's clients under its balancing policy (affinity, health, passive ejection), and a
/// stream opened on its uplink for the request's head.
/// </summary>
internal sealed class UplinkPicker
{
    /// <summary>How many uplinks to try when the one picked closes under us or is full.</summary>
    private const int OpenAttempts = 3;

    private readonly SessionRegistry _registry;
    private readonly ProxyEntryMetrics _metrics;
    private readonly ILogger _logger;

    public UplinkPicker(SessionRegistry registry, ProxyEntryMetrics metrics, ILogger<TunnelForwarder> logger)
    {
        _registry = registry;
        _metrics = metrics;
        _logger = logger;
    }

    /// <summary>The session's policy and the request's affinity key under it, read once for all attempts.</summary>
    public void ApplyPolicy(ProxyExchange exchange)
    {
        exchange.Policy = _registry.PolicyFor(exchange.Session);
        exchange.AffinityKey = exchange.Policy.AffinityPolicy.KeyOf(new HttpAffinityRequest(exchange.Context, exchange.Route.Prefix));
    }

    /// <summary>
    /// Cookie affinity: an answer from another client than the one the caller's cookie names (or without one) sets the
    /// cookie that keeps the caller on the client that answered.
    /// </summary>
    public static void AffinitizeResponse(ProxyExchange exchange)
    {
        var request = new HttpAffinityRequest(exchange.Context, exchange.Route.Prefix);
        if (exchange.Policy.AffinityPolicy.CookieFor(request, exchange.AffinityKey, exchange.Member!) is { } cookie)
        {
            exchange.Context.Response.Headers.Append(HeaderNames.SetCookie, cookie);
        }
    }

    /// <summary>
    /// Opens the stream on one of the session's uplinks, setting <see cref="ProxyExchange.Member"/>. Without a stream,
    /// the status says why: no uplink left (<see cref="StreamOpenStatus.UplinkClosed"/>, with <paramref name="pick"/>
    /// telling whether clients exist that are not ready), every one passed over at its stream limit, or a head too large.
    /// </summary>
    public StreamOpenStatus OpenStream(ProxyExchange exchange, out UplinkStream? stream, out PickStatus pick)
    {
        var context = new PickContext(exchange.AffinityKey, exchange.FailedMember);
        bool endStream = !exchange.HasBody && !exchange.IsUpgrade;
        StreamOpenStatus status = StreamOpenStatus.UplinkClosed;
        bool atLimit = false;
        pick = PickStatus.NoClient;
        for (int attempt = 0; attempt < OpenAttempts; attempt++)
        {
            SessionMember? member = _registry.Pick(exchange.Session, context, out pick);
            if (member is null)
            {
                break;
            }

            // Closed between the pick and the open (the registry drops it shortly), or full since the pick: try another.
            status = member.Uplink.TryOpenStream(exchange.Head, endStream, out stream);
            if (status is StreamOpenStatus.Opened or StreamOpenStatus.HeadTooLarge)
            {
                exchange.Member = status == StreamOpenStatus.Opened ? member : null;
                return status;
            }

            atLimit |= status == StreamOpenStatus.AtStreamLimit;
        }

        stream = null;
        exchange.Member = null;
        return atLimit ? StreamOpenStatus.AtStreamLimit : status;
    }

    /// <summary>The member's backend could not be reached: counted towards its passive ejection.</summary>
    public void ReportUnreachable(ProxyExchange exchange)
    {
        if (_registry.ReportUnreachable(exchange.Member!, out TimeSpan backoff))
        {
            ProxyEntryLog.ClientEjected(_logger, exchange.Session, exchange.Member!.Uplink.Name, (long)backoff.TotalMilliseconds);
            _metrics.ClientEjected();
        }
    }
}
