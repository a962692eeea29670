using Tunnel2.ProxyEntry.Tcp;

namespace Tunnel2.TunnelServer.Hosting;

/// <summary>
/// The server's one event loop (issue 52, stages 2b and 3b; thread <c>server-loop</c>), shared by the TCP callers
/// (<c>TunnelServer:Tcp:Engine</c> = <c>Loop</c>) and the plain-TCP uplinks (<c>TunnelServer:Uplink:Engine</c> =
/// <c>Loop</c>): a caller's bytes become uplink frames in the turn that read them, with no hand-off between threads.
/// Started by its first user, so a server that needs none runs no loop thread.
/// </summary>
/// <param name="logger">The TCP door's log (its category, as before the loop was shared: the relay's lines are the door's).</param>
public sealed class ServerLoop(ILogger logger) : IDisposable
{
    private readonly Lock _sync = new();
    private TcpCallerLoop? _loop;
    private bool _tried;
    private bool _disposed;

    /// <summary>The loop once started; null before, and when it cannot run here. The tests check its fault count.</summary>
    public TcpCallerLoop? Started => Volatile.Read(ref _loop);

    /// <summary>
    /// The loop, started on the first call; null where there is none (<see cref="Tunnel2.Loops.EventLoop.IsSupported"/>),
    /// when it cannot start (logged once) or once the server has stopped.
    /// </summary>
    public TcpCallerLoop? Start()
    {
        lock (_sync)
        {
            if (!_tried && !_disposed)
            {
                _tried = true;
                Volatile.Write(ref _loop, TcpCallerLoop.TryStart(logger));
            }

            return _disposed ? null : _loop;
        }
    }

    public void Dispose()
    {
        lock (_sync)
        {
            _disposed = true;
        }

        _loop?.Dispose();
    }
}
