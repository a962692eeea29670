using Tunnel2.Loops;

namespace Tunnel2.TunnelClient.EventLoops;

/// <summary>
/// The client's one event loop thread, <c>client-loop</c> (issue 52): its plain-TCP uplinks and its TCP targets share
/// it, so a Data frame the loop reads from the uplink is sent to its target in the same turn, and a target's bytes are
/// written to the uplink at that turn's end. Started at first use; a platform without the loop never starts it.
/// </summary>
public sealed partial class ClientLoop : IDisposable
{
    private readonly ILogger _logger;
    private readonly Lock _sync = new();
    private EventLoop? _loop;
    private bool _disposed;
    private int _faults;
    private int _uplinks;

    public ClientLoop(ILogger<ClientLoop> logger) => _logger = logger;

    /// <summary>Exceptions a callback threw on the loop (a bug, such as a guarded call made there); the tests expect none.</summary>
    public int FaultCount => Volatile.Read(ref _faults);

    /// <summary>Uplinks handed to the loop so far (for diagnostics and tests).</summary>
    public int UplinksTaken => Volatile.Read(ref _uplinks);

    /// <summary>The loop, started now if it was not.</summary>
    /// <exception cref="PlatformNotSupportedException">Not Linux on x86-64.</exception>
    /// <exception cref="DllNotFoundException">A libc without epoll's entry points (or EntryPointNotFoundException).</exception>
    public EventLoop Loop
    {
        get
        {
            lock (_sync)
            {
                ObjectDisposedException.ThrowIf(_disposed, this);
                return _loop ??= new EventLoop("client-loop", OnFault);
            }
        }
    }

    /// <summary>An uplink was handed to the loop.</summary>
    public void OnUplinkTaken() => Interlocked.Increment(ref _uplinks);

    public void Dispose()
    {
        EventLoop? loop;
        lock (_sync)
        {
            _disposed = true;
            loop = _loop;
        }

        loop?.Dispose();
    }

    /// <summary>A callback threw on the loop (a bug): counted, and logged off the loop, which goes on.</summary>
    private void OnFault(Exception fault)
    {
        Interlocked.Increment(ref _faults);
        ThreadPool.UnsafeQueueUserWorkItem(static state => LoopFault(state.Logger, state.Fault), (Logger: _logger, Fault: fault), preferLocal: false);
    }

    [LoggerMessage(EventId = 4660, Level = LogLevel.Error, Message = "A callback on the client's event loop failed (a bug); the loop goes on")]
    private static partial void LoopFault(ILogger logger, Exception fault);
}
