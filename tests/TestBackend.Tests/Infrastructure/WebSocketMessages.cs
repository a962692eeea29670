using System.Net.WebSockets;

namespace Tunnel2.TestBackend.Tests.Infrastructure;

/// <summary>Reads whole WebSocket messages, however many fragments they came in.</summary>
public static class WebSocketMessages
{
    public static async Task<(WebSocketMessageType Type, byte[] Message)> ReceiveAsync(WebSocket socket, CancellationToken cancellationToken)
    {
        using var message = new MemoryStream();
        byte[] buffer = new byte[16 * 1024];
        while (true)
        {
            ValueWebSocketReceiveResult result = await socket.ReceiveAsync(buffer.AsMemory(), cancellationToken);
            message.Write(buffer, 0, result.Count);
            if (result.EndOfMessage)
            {
                return (result.MessageType, message.ToArray());
            }
        }
    }
}
