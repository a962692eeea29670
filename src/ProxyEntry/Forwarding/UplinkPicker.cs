using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry.Forwarding;

/// <summary>
/// The pick step: one of the session's clients under its balancing policy (affinity, health, passive ejection), and a
/// stream opened on its uplink for the request's head. The member it opened the stream on counts the request, and
/// under cookie affinity the pick chooses the cookie that keeps the caller on that member, for the forward step to send
/// with the answer's head (as YARP's affinity is a response transform chosen with the destination).
/// </summary>
internal sealed class UplinkPicker
{
    /// <summary>How many uplinks to try when the one picked closes under us or is full.</summary>
    private const int OpenAttempts = 3;

    private readonly SessionRegistry _registry;

    public UplinkPicker(SessionRegistry registry) => _registry = registry;

    /// <summary>The session's policy and the request's affinity key under it, read once for all attempts.</summary>
    public static void ApplyPolicy(ProxyExchange exchange)
    {
        exchange.Policy = exchange.SessionPolicy.Balancing; // the policy the route step read: no second lookup
        exchange.AffinityKey = exchange.Policy.AffinityPolicy.KeyOf(new HttpAffinityRequest(exchange.Context, exchange.Route.Prefix));
    }

    /// <summary>
    /// Cookie affinity: the cookie an answer from <see cref="ProxyExchange.Member"/> sets when the caller's cookie names
    /// another client (or none), keeping the caller on the client that answered; null when there is none to set.
    /// </summary>
    public static string? AffinityCookieFor(ProxyExchange exchange) =>
        exchange.Policy.AffinityPolicy.CookieFor(new HttpAffinityRequest(exchange.Context, exchange.Route.Prefix), exchange.AffinityKey, exchange.Member!);

    /// <summary>
    /// Opens the stream on one of the session's uplinks, setting <see cref="ProxyExchange.Member"/> (which counts the
    /// request) and <see cref="ProxyExchange.AffinityCookie"/>. Without a stream,
    /// the status says why: no uplink left (<see cref="StreamOpenStatus.UplinkClosed"/>, with <paramref name="pick"/>
    /// telling whether clients exist that are not ready), every one passed over at its stream limit, or a head too large.
    /// </summary>
    public StreamOpenStatus OpenStream(ProxyExchange exchange, out IHttpExchange? stream, out PickStatus pick)
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
            if (status == StreamOpenStatus.Opened)
            {
                exchange.Member = member;
                member.CountRequest();
                exchange.AffinityCookie = AffinityCookieFor(exchange);
                return status;
            }

            if (status == StreamOpenStatus.HeadTooLarge)
            {
                break;
            }

            atLimit |= status == StreamOpenStatus.AtStreamLimit;
        }

        stream = null;
        exchange.Member = null;
        exchange.AffinityCookie = null;
        return status == StreamOpenStatus.HeadTooLarge ? status : atLimit ? StreamOpenStatus.AtStreamLimit : status;
    }
}
