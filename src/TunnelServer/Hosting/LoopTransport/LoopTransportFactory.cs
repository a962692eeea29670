using System.Buffers;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Tunnel2.Loops;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// Kestrel's connection transport on the server's event loop (issue 52, stage 4a; <c>TunnelServer:Public:Transport</c> =
/// <c>Loop</c>): registered beside the socket transport, it binds the <see cref="LoopEndPoint"/>s only (the public
/// plain-HTTP listener), so the admin, h2c and TLS listeners stay on Kestrel's sockets.
/// </summary>
internal sealed class LoopTransportFactory : IConnectionListenerFactory, IConnectionListenerFactorySelector, IDisposable
{
    private readonly Func<EventLoop?> _loop;
    private readonly Func<IPEndPoint, Socket> _listenSocket;
    private readonly LoopConnectionLimits _limits;
    private readonly int _readBudgetPerTurn;
    private readonly MemoryPool<byte> _pool;
    private readonly bool _callerHandover;

    /// <param name="loop">The server's loop, started on the first bind; null where it cannot run (refused at start).</param>
    /// <param name="listenSocket">A bound socket, not yet listening, with the public listener's socket options.</param>
    /// <param name="pool">Kestrel's pinned block pool (its factory's), so that a pipe's segments pin for free in a gather send.</param>
    /// <param name="callerHandover">Whether upgraded callers leave Kestrel for ProxyEntry's relay on the loop (<c>TunnelServer:Public:UpgradeRelay</c> = <c>Loop</c>).</param>
    /// <param name="readBudgetPerTurn">TunnelServer:Public:LoopReadBudget (<see cref="LoopReadBudget"/>); 0: none.</param>
    public LoopTransportFactory(Func<EventLoop?> loop, Func<IPEndPoint, Socket> listenSocket, LoopConnectionLimits limits, MemoryPool<byte> pool,
        int readBudgetPerTurn = 0, bool callerHandover = false)
    {
        _callerHandover = callerHandover;
        _loop = loop;
        _listenSocket = listenSocket;
        _limits = limits;
        _readBudgetPerTurn = readBudgetPerTurn;
        _pool = pool;
    }

    public bool CanBind(EndPoint endpoint) => endpoint is LoopEndPoint;

    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        if (endpoint is not LoopEndPoint at)
        {
            throw new NotSupportedException($"The loop transport binds the public plain-HTTP listener only, not {endpoint}.");
        }

        EventLoop loop = _loop() ?? throw new InvalidOperationException(
            "TunnelServer:Public:Transport=Loop but the server's event loop could not start here (see the log); use Transport=Sockets.");
        Socket bound;
        try
        {
            bound = _listenSocket(at);
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            throw new AddressInUseException(ex.Message, ex); // as the socket transport reports it (the server names the option)
        }

        return await LoopConnectionListener.StartAsync(new LoopScheduler(loop), _pool, _limits, _readBudgetPerTurn, bound, _callerHandover).ConfigureAwait(false);
    }

    public void Dispose() => _pool.Dispose();
}
