using System.Net.WebSockets;
using System.Text;
using Tunnel2.TestBackend.Tests.Infrastructure;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Round trips through a WebSocket echo (TestBackend's <c>/loadtest/ws</c>): each message back whole, as sent, before the next goes.</summary>
public static class WebSocketEcho
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    /// <summary>Sends <paramref name="count"/> text messages, the i-th <paramref name="text"/>(i), and asserts each comes back as that text.</summary>
    public static async Task TextAsync(WebSocket socket, int count, Func<int, string> text, CancellationToken cancellationToken)
    {
        for (int i = 0; i < count; i++)
        {
            byte[] message = Encoding.UTF8.GetBytes(text(i));
            await socket.SendAsync(message, WebSocketMessageType.Text, endOfMessage: true, cancellationToken);
            (WebSocketMessageType type, byte[] echoed) = await WebSocketMessages.ReceiveAsync(socket, cancellationToken).WaitAsync(Patience, cancellationToken);
            Assert.Equal(WebSocketMessageType.Text, type);
            Assert.Equal(message, echoed);
        }
    }

    /// <summary>Closes the socket normally and asserts the echo agreed.</summary>
    public static async Task CloseAsync(WebSocket socket, CancellationToken cancellationToken)
    {
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "done", cancellationToken).WaitAsync(TimeSpan.FromSeconds(10), cancellationToken);
        Assert.Equal(WebSocketCloseStatus.NormalClosure, socket.CloseStatus);
    }
}
