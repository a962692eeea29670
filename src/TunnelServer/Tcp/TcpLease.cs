using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Tcp;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// One TCP login's hold on its session's port, from the 101 to the end of the uplink: the port stays open while any
/// lease does. <see cref="Attach"/> makes the uplink one the port's callers are sent to.
/// </summary>
public sealed class TcpLease : IDisposable
{
    private readonly TcpSessions _owner;
    private Uplink? _uplink;
    private int _disposed;

    internal TcpLease(TcpSessions owner, TcpSessionListener listener)
    {
        _owner = owner;
        Listener = listener;
    }

    internal TcpSessionListener Listener { get; }

    public int Port => Listener.Port;

    /// <summary><c>host:port</c> as the client is told it (<c>Tunnel2-Tcp-Address</c>).</summary>
    public string AddressFor(string? dialledHost) => TcpPublicAddress.For(Listener.BindAddress, Listener.Port, dialledHost);

    /// <param name="weight">The client's share under the weighted strategy (<c>--weight</c>).</param>
    public void Attach(Uplink uplink, int weight = 1)
    {
        _uplink = uplink;
        Listener.AddClient(uplink, weight);
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (_uplink is not null)
        {
            Listener.RemoveClient(_uplink);
        }

        _owner.Release(Listener);
    }
}
