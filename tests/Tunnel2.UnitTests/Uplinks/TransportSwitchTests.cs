using System.IO.Pipelines;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using Tunnel2.Protocol.Http1;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelServer.Uplinks;
using Tunnel2.TunnelServer.Uplinks.Handshake;
using Tunnel2.UnitTests.Infrastructure;

namespace Tunnel2.UnitTests.Uplinks;

/// <summary>The transport layer alone, over in-memory streams: the plain upgrade as it is, WebSocket messages, early data refused.</summary>
public sealed class TransportSwitchTests
{
    private const string Head = "GET /tunnel2/connect HTTP/1.1\r\nHost: t\r\n\r\n";
    private static readonly HandshakeAcceptance Plain = new("s-1", null, 3, null);
    private static readonly HandshakeAcceptance OverWebSocket = new("s-1", null, 3, "dGhlIHNhbXBsZSBub25jZQ==");

    [Fact]
    public async Task A_plain_upgrade_goes_on_over_the_same_transport()
    {
        using var probe = new AcceptanceProbe();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, PipeStream client) = PipeStream.CreatePair();
        UplinkConnection connection = await HandshakenAsync(socket, (server, client), Plain, Encoding.ASCII.GetBytes(Head));
        DuplexPipe handshake = connection.Transport;
        DuplexPipe? seen = null;

        await new TransportSwitch(probe.Events).RunAsync(connection, next => Task.FromResult(seen = next.Transport)).WithTimeout();

        Assert.Same(handshake, seen);
        Assert.Empty(probe.Refused);
    }

    [Fact]
    public async Task A_websocket_login_goes_on_over_binary_messages()
    {
        using var probe = new AcceptanceProbe();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, PipeStream client) = PipeStream.CreatePair();
        UplinkConnection connection = await HandshakenAsync(socket, (server, client), OverWebSocket, Encoding.ASCII.GetBytes(Head));
        using WebSocket clientSocket = WebSocket.CreateFromStream(client, new WebSocketCreationOptions { IsServer = false, KeepAliveInterval = TimeSpan.Zero });

        Task switching = new TransportSwitch(probe.Events).RunAsync(connection, async next =>
        {
            await next.Transport.Output.WriteAsync(Encoding.ASCII.GetBytes("frames"));
            ReadResult read = await next.Transport.Input.ReadAsync();
            Assert.Equal("reply", Encoding.ASCII.GetString(read.Buffer.FirstSpan));
            next.Transport.Input.AdvanceTo(read.Buffer.End);
        });
        byte[] buffer = new byte[64];
        ValueWebSocketReceiveResult message = await clientSocket.ReceiveAsync(buffer.AsMemory(), CancellationToken.None).WithTimeout();
        await clientSocket.SendAsync(Encoding.ASCII.GetBytes("reply"), WebSocketMessageType.Binary, endOfMessage: true, CancellationToken.None);
        client.Dispose(); // the connection ends: the server's WebSocket closes without waiting for a close message
        await switching.WithTimeout();

        Assert.Equal(WebSocketMessageType.Binary, message.MessageType);
        Assert.Equal("frames", Encoding.ASCII.GetString(buffer, 0, message.Count));
        Assert.Empty(probe.Refused);
    }

    [Fact]
    public async Task A_websocket_client_that_sent_data_before_the_101_is_refused_and_goes_no_further()
    {
        using var probe = new AcceptanceProbe();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        (PipeStream server, PipeStream client) = PipeStream.CreatePair();
        UplinkConnection connection = await HandshakenAsync(socket, (server, client), OverWebSocket, Encoding.ASCII.GetBytes(Head + "too soon"));
        bool reached = false;

        await new TransportSwitch(probe.Events).RunAsync(connection, _ => Task.FromResult(reached = true)).WithTimeout();

        Assert.False(reached);
        Assert.Equal(["websocket-early-data"], probe.Refused);
    }

    /// <summary>A connection as the handshake layer leaves it: the head read from its transport, what followed it still buffered.</summary>
    private static async Task<UplinkConnection> HandshakenAsync(
        Socket socket, (PipeStream Server, PipeStream Client) streams, HandshakeAcceptance accepted, byte[] sent)
    {
        var connection = new UplinkConnection(socket, streams.Server, CancellationToken.None)
        {
            Transport = DuplexPipe.Over(streams.Server, zeroByteReads: true),
            Accepted = accepted,
        };
        await streams.Client.WriteAsync(sent);
        await streams.Client.FlushAsync();
        Assert.NotNull(await Http1Head.ReadAsync(connection.Transport.Input, HandshakeReader.MaxHeadBytes, CancellationToken.None).WithTimeout());
        return connection;
    }
}
