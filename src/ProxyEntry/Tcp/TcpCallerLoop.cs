using Microsoft.Extensions.Logging;
using Tunnel2.Loops;
using Tunnel2.Loops.Guard;
using Tunnel2.Protocol.Relaying.OnLoop;
using Tunnel2.ProxyEntry.Configuration;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// The server's event loop (issue 52, stages 2b and 3b): one loop thread, <c>server-loop</c>, holds every relayed caller
/// of every session's port (<see cref="LoopCallerConnection"/>, <c>TunnelServer:Tcp:Engine</c> = <c>Loop</c>) and the
/// plain-TCP uplinks (<c>TunnelServer:Uplink:Engine</c> = <c>Loop</c>), so a caller's bytes and the uplink frames they
/// become are handled in one turn of one thread.
/// The target's bytes go from the uplink reader's buffer straight to the caller's socket; the caller's bytes are read on
/// the loop into pooled buffers handed to the uplink's writer. Accepting and putting a caller on a client
/// (<see cref="TcpDispatch"/>) stay on the runtime's sockets; every log line is written off the loop.
/// </summary>
public sealed class TcpCallerLoop : IDisposable
{
    private readonly ILogger _logger;
    private int _faults;

    /// <param name="logger">Wrapped in the loop guard: a line logged on the loop fails (and counts as a fault).</param>
    public TcpCallerLoop(ILogger logger)
    {
        _logger = new LoopGuardLogger(logger);
        Loop = new EventLoop("server-loop", OnFault);
    }

    /// <summary>Exceptions a callback threw on the loop (a bug, such as a guarded call made there); the tests expect none.</summary>
    public int FaultCount => Volatile.Read(ref _faults);

    /// <summary>The loop itself, for the uplinks and the callers it runs.</summary>
    public EventLoop Loop { get; }

    /// <summary>The door's log, guarded: a line written on the loop throws there.</summary>
    internal ILogger Logger => _logger;

    /// <summary>Whether the loop is to relay the callers: <c>Engine</c> = <c>Loop</c> on a platform with the loop (Linux x86-64).</summary>
    public static bool IsChosen(TcpServerOptions tcp) =>
        tcp.Engine == TcpServerOptions.EngineLoop && EventLoop.IsSupported;

    /// <summary>
    /// The loop when <see cref="IsChosen"/>; null (the runtime's sockets) otherwise, and also when the loop cannot start
    /// here (a libc without epoll's entry points), which is logged once.
    /// </summary>
    public static TcpCallerLoop? Start(TcpServerOptions tcp, ILogger logger) => IsChosen(tcp) ? TryStart(logger) : null;

    /// <summary>The loop; null where there is none (<see cref="EventLoop.IsSupported"/>) or it cannot start here (logged once).</summary>
    public static TcpCallerLoop? TryStart(ILogger logger)
    {
        if (!EventLoop.IsSupported)
        {
            return null;
        }

        try
        {
            return new TcpCallerLoop(logger);
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or InvalidOperationException)
        {
            TcpLog.LoopUnavailable(logger, ex.Message);
            return null;
        }
    }

    public void Dispose() => Loop.Dispose();

    /// <summary>A callback threw on the loop (a bug): logged off the loop, which goes on.</summary>
    private void OnFault(Exception fault)
    {
        Interlocked.Increment(ref _faults);
        LoopStreamConnection.OffLoop(static state => TcpLog.LoopFault(state.Logger, state.Fault), (Logger: _logger, Fault: fault));
    }
}
