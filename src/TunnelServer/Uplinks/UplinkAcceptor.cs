using System.Net.Sockets;
using Tunnel2.TunnelServer.Uplinks.OnLoop;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// Serves one connection of the tunnel port through its layers, in Kestrel's connection-middleware style: TLS
/// (<see cref="TlsLayer"/>), the upgrade request and its answer with the per-address limits (<see cref="HandshakeLayer"/>),
/// the transport (<see cref="TransportSwitch"/>) and the uplink, registered for its session until it closes
/// (<see cref="UplinkRegistration"/>). A layer that ends the connection does not call the next.
/// </summary>
public sealed class UplinkAcceptor
{
    private readonly TlsLayer _tls;
    private readonly HandshakeLayer _handshake;
    private readonly TransportSwitch _transport;
    private readonly LoopUplinks? _loops;

    // The chain, built once: a connection allocates no delegates to pass through it.
    private readonly Func<UplinkConnection, Task> _afterTls;
    private readonly Func<UplinkConnection, Task> _afterHandshake;
    private readonly Func<UplinkConnection, Task> _afterTransport;

    /// <param name="loops">Whether a plain login is read on the server's loop; null: never (tests).</param>
    public UplinkAcceptor(TlsLayer tls, HandshakeLayer handshake, TransportSwitch transport, UplinkRegistration registration, LoopUplinks? loops = null)
    {
        _loops = loops;
        _tls = tls;
        _handshake = handshake;
        _transport = transport;
        _afterTls = HandshakeAsync;
        _afterHandshake = TransportAsync;
        _afterTransport = registration.RunAsync;
    }

    /// <param name="socket">An accepted connection; this method owns and closes it.</param>
    /// <param name="stopping">Cancelled when the server stops: handshakes still in progress end.</param>
    public async Task ServeAsync(Socket socket, CancellationToken stopping)
    {
        socket.NoDelay = true;
        var network = new NetworkStream(socket, ownsSocket: false);
        var connection = new UplinkConnection(socket, network, stopping);
        try
        {
            await using (network)
            {
                if (_loops?.ForLogin() is { } loop)
                {
                    connection.UseLoop(loop);
                }

                await _tls.RunAsync(connection, _afterTls);
            }
        }
        finally
        {
            // An uplink on the loop closes its socket on the loop's thread, which uses its descriptor until then.
            if (!connection.SocketHandedOver)
            {
                socket.Dispose();
            }
        }
    }

    private Task HandshakeAsync(UplinkConnection connection) => _handshake.RunAsync(connection, _afterHandshake);

    private Task TransportAsync(UplinkConnection connection) => _transport.RunAsync(connection, _afterTransport);
}
