using System.Buffers;
using System.Net.Sockets;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Relaying;
using Tunnel2.ProxyEntry.Diagnostics;

namespace Tunnel2.ProxyEntry.Upgrades;

/// <summary>
/// An upgraded caller relayed on the server's loop when its connection can be handed over
/// (<see cref="ICallerHandoverFeature"/>): the caller's early bytes go up first, then <see cref="LoopUpgradedCaller"/>
/// relays until an end. The request stays in flight until then, so the drain, the upgrade counts and Kestrel's stop
/// (its abort, heard through RequestAborted) see it as they see the task relay's.
/// </summary>
internal static class LoopUpgrades
{
    /// <returns>Why the relay ended, in the task relay's words; null when the connection stays Kestrel's (no such
    /// feature, not HTTP/1.1, or the handover refused): the task relay then.</returns>
    public static async Task<string?> RelayAsync(HttpContext context, IHttpExchange exchange, ILogger logger, string session)
    {
        if (!HttpProtocol.IsHttp11(context.Request.Protocol)
            || context.Features.Get<ICallerHandoverFeature>() is not { } feature || await feature.HandOverAsync() is not { } handover)
        {
            return null;
        }

        ProxyEntryLog.UpgradeOnLoop(logger, session, exchange.Id, handover.Early.Length);
        IByteStream stream = exchange.AsByteStream();
#pragma warning disable CA2000 // reset below, or the relay's from here: closed as it ends
        Socket caller = handover.ToSocket();
#pragma warning restore CA2000
        if (await SendEarlyAsync(stream, handover.Early) is { } failed)
        {
            RelayEnd.Reset(caller);
            return failed;
        }

        var relay = new LoopUpgradedCaller(handover.Loop, stream, caller);
        relay.Start();
        using (context.RequestAborted.Register(static state => ((LoopUpgradedCaller)state!).Abort(), relay))
        {
            return await relay.Done;
        }
    }

    /// <returns>Null when sent (or none); else why the relay ends before it starts.</returns>
    private static async Task<string?> SendEarlyAsync(IByteStream stream, byte[] early)
    {
        if (early.Length == 0)
        {
            return null;
        }

        try
        {
            await stream.SendAsync(new ReadOnlySequence<byte>(early), endStream: false, CancellationToken.None);
            return null;
        }
        catch (StreamResetException ex)
        {
            return $"stream reset ({ex.ErrorCode})";
        }
        catch (UplinkClosedException)
        {
            return "relay failed";
        }
    }
}
