using System.Net;
using System.Net.Sockets;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>
/// The blocking connect of a loop uplink (<see cref="UplinkDialer"/>): a server name's addresses tried in turn, each on a
/// socket of its own, because .NET on Linux refuses a second connect on a socket whose first one failed. A cancellation
/// disposes the socket in hand, which ends the blocking call it is in.
/// </summary>
internal sealed class BlockingDial(Func<Socket> createSocket) : IDisposable
{
    private readonly Lock _lock = new();
    private Socket? _socket;
    private bool _cancelled;

    /// <summary>The connected socket; its blocking calls may follow until <see cref="Take"/>.</summary>
    public Socket Connected => _socket ?? throw new InvalidOperationException("Nothing is connected yet.");

    /// <summary>Connects to the first of <paramref name="addresses"/> that accepts, IPv4 first (as
    /// <c>Socket.ConnectAsync(host)</c> tries on a dual-stack host).</summary>
    /// <exception cref="SocketException">None accepted: the last address's error.</exception>
    /// <exception cref="ObjectDisposedException">Cancelled.</exception>
    public void Connect(IReadOnlyList<IPAddress> addresses, int port)
    {
        if (addresses.Count == 0)
        {
            throw new SocketException((int)SocketError.HostNotFound);
        }

        SocketException? last = null;
        foreach (IPAddress address in addresses.Where(a => a.AddressFamily == AddressFamily.InterNetwork)
                     .Concat(addresses.Where(a => a.AddressFamily != AddressFamily.InterNetwork)))
        {
            Socket socket = Next();
            try
            {
                socket.Connect(new IPEndPoint(address, port));
                return;
            }
            catch (SocketException ex)
            {
                last = ex;
            }
        }

        throw last!;
    }

    /// <summary>Ends a blocking call in progress, and any attempt after it.</summary>
    public void Cancel()
    {
        lock (_lock)
        {
            _cancelled = true;
            _socket?.Dispose();
        }
    }

    /// <summary>The connected socket, now the caller's to close.</summary>
    public Socket Take()
    {
        lock (_lock)
        {
            Socket socket = Connected;
            _socket = null;
            return socket;
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            _socket?.Dispose();
            _socket = null;
        }
    }

    private Socket Next()
    {
        lock (_lock)
        {
            _socket?.Dispose();
            _socket = null;
            ObjectDisposedException.ThrowIf(_cancelled, this);
            _socket = createSocket();
            return _socket;
        }
    }
}
