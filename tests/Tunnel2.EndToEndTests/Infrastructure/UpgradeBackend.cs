using System.Net.WebSockets;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A real Kestrel backend for the upgrade cases TestBackend has no endpoint for: a protocol of its own behind
/// <c>Upgrade: shout</c> (echoes upper-cased until a '.' comes, then says "BYE" and closes its side), and a
/// WebSocket whose backend vanishes mid-conversation (the connection is aborted, no close frame).
/// </summary>
public sealed class UpgradeBackend : IAsyncDisposable
{
    private readonly LoopbackApp _app;
    private readonly Seen _seen;

    private UpgradeBackend(LoopbackApp app, Seen seen)
    {
        _app = app;
        _seen = seen;
    }

    public Uri Url => _app.Url;

    /// <summary>The request headers the last upgrade request arrived with.</summary>
    public IHeaderDictionary? LastUpgradeHeaders => _seen.UpgradeHeaders;

    public static async Task<UpgradeBackend> StartAsync()
    {
        var seen = new Seen();
        LoopbackApp app = await LoopbackApp.StartAsync(app =>
        {
            app.UseWebSockets();
            app.MapGet("/shout", (HttpContext context) => ShoutAsync(context, seen));
            app.MapGet("/vanishing-ws", VanishingWebSocketAsync);
        });
        return new UpgradeBackend(app, seen);
    }

    public ValueTask DisposeAsync() => _app.DisposeAsync();

    private static async Task ShoutAsync(HttpContext context, Seen seen)
    {
        seen.UpgradeHeaders = new HeaderDictionary(context.Request.Headers.ToDictionary());
        IHttpUpgradeFeature upgrade = context.Features.GetRequiredFeature<IHttpUpgradeFeature>();
        if (!upgrade.IsUpgradableRequest || context.Request.Headers.Upgrade != "shout")
        {
            context.Response.StatusCode = StatusCodes.Status426UpgradeRequired;
            context.Response.Headers.Upgrade = "shout";
            return;
        }

        context.Response.Headers.Upgrade = "shout";
        await using Stream connection = await upgrade.UpgradeAsync();
        byte[] buffer = new byte[4096];
        int read;
        while ((read = await connection.ReadAsync(buffer)) > 0)
        {
            string text = Encoding.ASCII.GetString(buffer, 0, read);
            await connection.WriteAsync(Encoding.ASCII.GetBytes(text.ToUpperInvariant()));
            if (text.Contains('.', StringComparison.Ordinal))
            {
                await connection.WriteAsync("BYE"u8.ToArray());
                return; // this side ends the protocol: the connection closes
            }
        }
    }

    private static async Task VanishingWebSocketAsync(HttpContext context)
    {
        using WebSocket socket = await context.WebSockets.AcceptWebSocketAsync();
        byte[] buffer = new byte[1024];
        while (true)
        {
            ValueWebSocketReceiveResult received = await socket.ReceiveAsync(buffer.AsMemory(), context.RequestAborted);
            if (received.MessageType == WebSocketMessageType.Close)
            {
                return;
            }

            if (Encoding.UTF8.GetString(buffer, 0, received.Count) == "vanish")
            {
                context.Abort(); // gone without a close frame, as a crashed backend would be
                return;
            }

            await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType, received.EndOfMessage, context.RequestAborted);
        }
    }

    private sealed class Seen
    {
        public volatile IHeaderDictionary? UpgradeHeaders;
    }
}
