using System.Net.Sockets;

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

    // The chain, built once: a connection allocates no delegates to pass through it.
    private readonly Func<UplinkConnection, Task> _afterTls;
    private readonly Func<UplinkConnection, Task> _afterHandshake;
    private readonly Func<UplinkConnection, Task> _afterTransport;

    public UplinkAcceptor(TlsLayer tls, HandshakeLayer handshake, TransportSwitch transport, UplinkRegistration registration)
    {
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
        var network = new NetworkStream(socket, ownsSocket: true);
        await using (network)
        {
            await _tls.RunAsync(new UplinkConnection(socket, network, stopping), _afterTls);
        }
    }

    private Task HandshakeAsync(UplinkConnection connection) => _handshake.RunAsync(connection, _afterHandshake);

    private Task TransportAsync(UplinkConnection connection) => _transport.RunAsync(connection, _afterTransport);
}
