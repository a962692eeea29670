using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// Dials a plain-HTTP backend for connections on the client's event loop (<see cref="LoopSocketStream"/>). The backend's
/// name is resolved once, off the loop, and kept (the loop must never wait for DNS); its addresses are tried in order,
/// as the runtime's connect does, each within what is left of the connect timeout.
/// </summary>
internal sealed class LoopBackendDialer
{
    private readonly EventLoop _loop;
    private readonly Uri _backend;
    private IPAddress[]? _addresses;

    public LoopBackendDialer(EventLoop loop, Uri backend)
    {
        _loop = loop;
        _backend = backend;
        if (IPAddress.TryParse(backend.IdnHost.Trim('[', ']'), out IPAddress? literal))
        {
            _addresses = [literal];
        }
    }

    /// <summary>Connects a new socket on the loop; <paramref name="configure"/> sets its options first.</summary>
    /// <exception cref="SocketException">No address could be connected.</exception>
    /// <exception cref="OperationCanceledException">The timeout or <paramref name="cancellationToken"/> ended the wait.</exception>
    public async Task<(Socket Socket, LoopSocketStream Stream)> ConnectAsync(Action<Socket> configure, CancellationToken cancellationToken)
    {
        IPAddress[] addresses = _addresses ?? await ResolveAsync(cancellationToken).ConfigureAwait(false);
        SocketException? last = null;
        foreach (IPAddress address in addresses)
        {
            var socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            configure(socket);
#pragma warning disable CA2000 // the stream is the caller's once connected, disposed (closing the socket) otherwise
            var stream = new LoopSocketStream(_loop, socket);
#pragma warning restore CA2000
            try
            {
                await stream.ConnectAsync(new IPEndPoint(address, _backend.Port), cancellationToken).ConfigureAwait(false);
                return (socket, stream);
            }
            catch (SocketException ex)
            {
                await stream.DisposeAsync().ConfigureAwait(false);
                last = ex;
            }
            catch
            {
                await stream.DisposeAsync().ConfigureAwait(false);
                throw;
            }
        }

        throw last ?? new SocketException((int)SocketError.HostNotFound);
    }

    /// <summary>Off the loop (a task of the pool's), once: the loop must not wait for a name server.</summary>
    private async Task<IPAddress[]> ResolveAsync(CancellationToken cancellationToken)
    {
        IPAddress[] found = await Task.Run(() => Dns.GetHostAddressesAsync(_backend.IdnHost, cancellationToken), cancellationToken).ConfigureAwait(false);
        if (found.Length == 0)
        {
            throw new SocketException((int)SocketError.HostNotFound);
        }

        _addresses = found;
        return found;
    }
}
