using System.IO.Pipelines;
using System.Net.WebSockets;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// The transport an accepted login asked for: frames straight over the connection (the plain upgrade), or frames in
/// WebSocket binary messages, for networks whose proxies pass only WebSocket upgrades.
/// </summary>
public sealed class TransportSwitch(AcceptanceEvents events)
{
    /// <remarks>The plain upgrade adds no state machine of its own to a connection that may stay idle for days.</remarks>
    public Task RunAsync(UplinkConnection connection, Func<UplinkConnection, Task> next) =>
        connection.Accepted.IsWebSocket ? RunOverWebSocketAsync(connection, next) : next(connection);

    private async Task RunOverWebSocketAsync(UplinkConnection connection, Func<UplinkConnection, Task> next)
    {
        // The client waits for the 101 before its first message (RFC 6455 §4.1), so nothing may be buffered yet.
        DuplexPipe handshake = connection.Transport;
        if (handshake.Input.TryRead(out ReadResult early) && !early.Buffer.IsEmpty)
        {
            events.Refused(connection.Remote?.Address, 400, "websocket-early-data");
            return;
        }

        await handshake.Input.CompleteAsync();
        await handshake.Output.CompleteAsync();

        // Its head was read on the server's loop: its messages are not the loop's frames, so they go to the runtime's sockets.
        connection.LeaveLoop();
#pragma warning disable CA2000 // the WebSocketStream below owns it (ownsWebSocket) and is an await using
        WebSocket webSocket = WebSocket.CreateFromStream(connection.Stream, new WebSocketCreationOptions { IsServer = true, KeepAliveInterval = TimeSpan.Zero });
#pragma warning restore CA2000
        Stream messages = WebSocketStream.Create(webSocket, WebSocketMessageType.Binary, ownsWebSocket: true);
        await using (messages)
        {
            connection.Transport = DuplexPipe.Over(messages, zeroByteReads: true);
            await next(connection);
        }
    }
}
