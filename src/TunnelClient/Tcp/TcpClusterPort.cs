using System.Globalization;

namespace Tunnel2.TunnelClient.Tcp;

/// <summary>
/// The session's public TCP port across the servers this client logs in to (the nodes of a cluster, each with its own
/// ports): the first port a server names is asked of every later login, to any server (<c>Tunnel2-Tcp-Port</c>), so
/// that every node listens on the same port and a balancer in front of them may send a caller to any node. Until a
/// port is known, TCP logins go one at a time, so the logins a client starts at once to every node do not each get a
/// port of their own. A server that still names another port (its own fixed port for the session, or one it had
/// already opened) is logged.
/// </summary>
internal sealed class TcpClusterPort(ILogger logger) : IDisposable
{
    private readonly SemaphoreSlim _firstLogin = new(1, 1);
    private int _port;

    /// <summary>The port to ask for; null before any server named one.</summary>
    public int? Wanted => Volatile.Read(ref _port) is > 0 and var port ? port : null;

    /// <summary>
    /// Before a TCP login: while no server has named a port yet, waits for the login in flight to end first. True when
    /// this login must call <see cref="EndFirstLogin"/> when it ends, however it ends.
    /// </summary>
    public async ValueTask<bool> WaitForFirstLoginAsync(CancellationToken cancellationToken)
    {
        if (Wanted is not null)
        {
            return false;
        }

        await _firstLogin.WaitAsync(cancellationToken);
        return true;
    }

    public void EndFirstLogin() => _firstLogin.Release();

    public void Dispose() => _firstLogin.Dispose();

    /// <summary>A server named <paramref name="address"/> (<c>host:port</c>, <c>Tunnel2-Tcp-Address</c>).</summary>
    public void OnGiven(string address, string server)
    {
        int separator = address.LastIndexOf(':');
        if (separator < 0 || !int.TryParse(address.AsSpan(separator + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int port))
        {
            return;
        }

        int agreed = Interlocked.CompareExchange(ref _port, port, 0);
        if (agreed != 0 && agreed != port)
        {
            TcpClientLog.PortDiffers(logger, server, port, agreed);
        }
    }
}
