using System.Net;
using System.Net.Sockets;
using Tunnel2.Loops;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// Dials a plain-HTTP backend for connections on the client's event loop (<see cref="LoopSocketStream"/>). The
/// backend's name is resolved off the loop (the loop must never wait for DNS) and kept for <see cref="AddressLifetime"/>,
/// and forgotten at once when no address it gave could be connected, so a backend that moved is found again as the
/// runtime's connect (which resolves every time) would find it. Its addresses are tried in order, each within what is
/// left of the connect timeout.
/// </summary>
internal sealed class LoopBackendDialer
{
    /// <summary>How long resolved addresses are used before the name is resolved again (no TTL comes with them).</summary>
    public static readonly TimeSpan AddressLifetime = TimeSpan.FromSeconds(30);

    private readonly EventLoop _loop;
    private readonly Uri _backend;
    private readonly bool _literal;
    private readonly TimeProvider _time;
    private readonly Func<string, CancellationToken, Task<IPAddress[]>> _resolve;
    private Resolved? _resolved;

    /// <param name="resolve">Resolves the backend's name (tests); the runtime's DNS by default.</param>
    public LoopBackendDialer(EventLoop loop, Uri backend, TimeProvider? time = null, Func<string, CancellationToken, Task<IPAddress[]>>? resolve = null)
    {
        _loop = loop;
        _backend = backend;
        _time = time ?? TimeProvider.System;
        _resolve = resolve ?? Dns.GetHostAddressesAsync;
        if (IPAddress.TryParse(backend.IdnHost.Trim('[', ']'), out IPAddress? literal))
        {
            _literal = true;
            _resolved = new Resolved([literal], long.MaxValue);
        }
    }

    /// <summary>Connects a new socket on the loop; <paramref name="configure"/> sets its options first.</summary>
    /// <exception cref="SocketException">No address could be connected.</exception>
    /// <exception cref="OperationCanceledException">The timeout or <paramref name="cancellationToken"/> ended the wait.</exception>
    public async Task<(Socket Socket, LoopSocketStream Stream)> ConnectAsync(Action<Socket> configure, CancellationToken cancellationToken)
    {
        Resolved? resolved = _resolved;
        IPAddress[] addresses = resolved is not null && _time.GetTimestamp() < resolved.Expires
            ? resolved.Addresses
            : await ResolveAsync(cancellationToken).ConfigureAwait(false);
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

        if (!_literal)
        {
            _resolved = null; // every address failed: the next connect asks the name server again
        }

        throw last ?? new SocketException((int)SocketError.HostNotFound);
    }

    /// <summary>Off the loop (a task of the pool's): the loop must not wait for a name server.</summary>
    private async Task<IPAddress[]> ResolveAsync(CancellationToken cancellationToken)
    {
        IPAddress[] found = await Task.Run(() => _resolve(_backend.IdnHost, cancellationToken), cancellationToken).ConfigureAwait(false);
        if (found.Length == 0)
        {
            throw new SocketException((int)SocketError.HostNotFound);
        }

        _resolved = new Resolved(found, _time.GetTimestamp() + (long)(AddressLifetime.TotalSeconds * _time.TimestampFrequency));
        return found;
    }

    private sealed record Resolved(IPAddress[] Addresses, long Expires);
}
