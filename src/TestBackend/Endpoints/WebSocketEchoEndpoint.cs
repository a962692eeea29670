using System.Buffers;
using System.Net.WebSockets;
using Tunnel2.TestBackend.Diagnostics;
using Tunnel2.TestBackend.Http;

namespace Tunnel2.TestBackend.Endpoints;

/// <summary>
/// <c>GET /loadtest/ws</c>: a WebSocket echo. Each fragment goes back as it came (same type, same end-of-message
/// flag), so a message of any size passes in one pooled buffer's worth of memory; a close is answered with the
/// caller's status.
/// </summary>
internal sealed class WebSocketEchoEndpoint(ILogger<WebSocketEchoEndpoint> logger)
{
    private const int BufferSize = 16 * 1024;

    public async Task HandleAsync(HttpContext context)
    {
        if (!context.WebSockets.IsWebSocketRequest)
        {
            context.Response.Headers.Upgrade = "websocket";
            await ProblemDetailsWriter.WriteAsync(context, StatusCodes.Status426UpgradeRequired, "WebSocket required",
                "GET /loadtest/ws answers only a WebSocket handshake (Connection: Upgrade, Upgrade: websocket).");
            return;
        }

        using WebSocket socket = await context.WebSockets.AcceptWebSocketAsync();
        byte[] buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
        long echoed = 0;
        CancellationToken aborted = context.RequestAborted;
        try
        {
            while (true)
            {
                ValueWebSocketReceiveResult received = await socket.ReceiveAsync(buffer.AsMemory(), aborted);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    await socket.CloseOutputAsync(socket.CloseStatus ?? WebSocketCloseStatus.NormalClosure, socket.CloseStatusDescription, aborted);
                    return;
                }

                await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType, received.EndOfMessage, aborted);
                echoed += received.Count;
            }
        }
        catch (Exception ex) when (ex is WebSocketException or OperationCanceledException or IOException)
        {
            // The caller vanished without a close handshake, or the connection broke.
            BackendLog.StreamAborted(logger, "ws", echoed);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
