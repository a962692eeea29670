using System.Net.Sockets;

namespace Tunnel2.Loops.Sockets;

/// <summary>
/// A wait for a runtime <see cref="Socket"/>'s readiness, done by a loop: the descriptor is in the loop's epoll set
/// until it is ready (for a read: bytes, its FIN or a reset, the read that follows says which) or the wait is
/// cancelled, then out again. An async call on the runtime's sockets would do the same wait, but it would put the
/// socket in the runtime's epoll set for good, whose thread would then wake for every event of a socket the loop
/// relays later. The task completes only once the descriptor has left the loop's set (or the loop has stopped), so the
/// socket may then be read or written without blocking, adopted by the loop or disposed. One wait per instance; the
/// server's TCP dispatch waits so for a caller's first bytes, its uplink handshake for the login's head.
/// </summary>
public sealed class SocketReadiness : ILoopHandler
{
    private static readonly Action<object?> RegisterOnLoop = static state => ((SocketReadiness)state!).Register();
    private static readonly Action<object?> CancelOnLoop = static state => ((SocketReadiness)state!).Complete(ready: false);

    private readonly EventLoop _loop;
    private readonly int _fd;
    private readonly LoopReadiness _interest;
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>On the loop only.</summary>
    private LoopRegistration _registration;
    private volatile bool _cancelled;

    private SocketReadiness(EventLoop loop, Socket socket, LoopReadiness interest)
    {
        _loop = loop;
        _fd = (int)socket.SafeHandle.DangerousGetHandle();
        _interest = interest;
    }

    /// <summary>
    /// Waits on <paramref name="loop"/> until <paramref name="socket"/> (non-blocking, used only synchronously so far) is
    /// ready for <paramref name="interest"/> (readable by default): the task completes when it is, and is cancelled when
    /// <paramref name="cancel"/> is or the loop stops.
    /// </summary>
    /// <returns>null when the loop has stopped (it takes no more work).</returns>
    public static Task? TryWait(EventLoop loop, Socket socket, CancellationToken cancel, LoopReadiness interest = LoopReadiness.Read)
    {
        var wait = new SocketReadiness(loop, socket, interest);
        if (!loop.Post(RegisterOnLoop, wait))
        {
            return null;
        }

        cancel.UnsafeRegister(static state => ((SocketReadiness)state!).OnCancelled(), wait);
        return wait._done.Task;
    }

    void ILoopHandler.OnReady(LoopReadiness ready) => Complete(ready: true);

    void ILoopHandler.OnLoopStopping() => Complete(ready: false);

    private void Register()
    {
        if (_cancelled || _done.Task.IsCompleted)
        {
            Complete(ready: false);
            return;
        }

        try
        {
            _registration = _loop.Register(_fd, this, _interest);
        }
        catch (InvalidOperationException ex)
        {
            _done.TrySetException(ex); // e.g. a descriptor already closed: the waiter's next call on the socket says so
        }
    }

    /// <summary>From the canceller's thread; a wait that ended already costs the loop nothing.</summary>
    private void OnCancelled()
    {
        if (_done.Task.IsCompleted)
        {
            return;
        }

        _cancelled = true;
        if (!_loop.Post(CancelOnLoop, this))
        {
            _done.TrySetCanceled(); // the loop has stopped: its set is closed with it
        }
    }

    /// <summary>On the loop: out of the set first, then the waiter hears of it (on the thread pool).</summary>
    private void Complete(bool ready)
    {
        if (_registration.IsRegistered)
        {
            _loop.Unregister(_registration);
            _registration = default;
        }

        if (ready)
        {
            _done.TrySetResult();
        }
        else
        {
            _done.TrySetCanceled();
        }
    }
}
