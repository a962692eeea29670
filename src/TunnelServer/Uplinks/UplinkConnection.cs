using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.TunnelServer.Uplinks.Handshake;
using Tunnel2.TunnelServer.Uplinks.OnLoop;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// One connection of the tunnel port as it passes the acceptance layers (<see cref="UplinkAcceptor"/>): each layer
/// reads what the layers before it set and hands the connection on.
/// </summary>
public sealed class UplinkConnection(Socket socket, Stream stream, CancellationToken stopping)
{
    private DuplexPipe? _transport;
    private HandshakeAcceptance? _accepted;

    public Socket Socket { get; } = socket;

    /// <summary>The socket's own stream (the runtime's), whatever <see cref="Stream"/> is now.</summary>
    public Stream Network { get; } = stream;

    /// <summary>
    /// The server's loop when the login is read on it (<see cref="UseLoop"/>) and its uplink is to run there; null on the
    /// runtime's sockets.
    /// </summary>
    public EventLoop? Loop { get; private set; }

    /// <summary>Whether the socket now belongs to an uplink on the loop, which closes it: the acceptor must not.</summary>
    public bool SocketHandedOver { get; set; }

    public IPEndPoint? Remote { get; } = socket.RemoteEndPoint as IPEndPoint;

    /// <summary>
    /// The address the login is judged and limited by: the socket's peer until <see cref="HandshakeLayer"/> has read the
    /// head, then the caller behind a trusted proxy (<see cref="LoginPeer"/>).
    /// </summary>
    public IPAddress? Peer { get; set; } = (socket.RemoteEndPoint as IPEndPoint)?.Address is { IsIPv4MappedToIPv6: true } mapped
        ? mapped.MapToIPv4() : (socket.RemoteEndPoint as IPEndPoint)?.Address;

    /// <summary>Cancelled when the server stops: handshakes still in progress end.</summary>
    public CancellationToken Stopping { get; } = stopping;

    /// <summary>
    /// The socket's stream (read and written through the loop's readiness after <see cref="UseLoop"/>), or the
    /// TLS stream over it once <see cref="TlsLayer"/> has run.
    /// </summary>
    public Stream Stream { get; set; } = stream;

    /// <summary>
    /// The pipe the connection is read and written through: over <see cref="Stream"/> from <see cref="HandshakeLayer"/>
    /// on, over WebSocket messages once <see cref="TransportSwitch"/> has switched a WebSocket login.
    /// </summary>
    public DuplexPipe Transport
    {
        get => _transport ?? throw new InvalidOperationException("The connection has no transport before the handshake layer.");
        set => _transport = value;
    }

    /// <summary>Reads and answers the login through <paramref name="loop"/>'s readiness: the socket stays out of the runtime's epoll set.</summary>
    public void UseLoop(EventLoop loop)
    {
        Loop = loop;
        Stream = new LoopHandshakeStream(loop, Socket);
    }

    /// <summary>A WebSocket login read on the loop: its messages are read on the runtime's sockets, as a TLS port's are.</summary>
    public void LeaveLoop()
    {
        if (Loop is not null)
        {
            Loop = null;
            Stream = Network; // never a TLS stream: a TLS port's logins are not read on the loop
        }
    }

    /// <summary>A TCP login's hold on its session's public TCP port (<see cref="HandshakeLayer"/> takes and ends it).</summary>
    public Tcp.TcpLease? TcpLease { get; set; }

    /// <summary>The login <see cref="HandshakeLayer"/> accepted (its 101 sent).</summary>
    public HandshakeAcceptance Accepted
    {
        get => _accepted ?? throw new InvalidOperationException("The connection has no accepted login before the handshake layer.");
        set => _accepted = value;
    }
}
