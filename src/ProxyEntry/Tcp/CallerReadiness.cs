using System.Net.Sockets;
using Tunnel2.Loops;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// The dispatch's wait for a caller's first bytes (<see cref="TcpDispatch"/>), done by the callers' loop: the caller's
/// descriptor is in the loop's epoll set until it is readable (bytes, its FIN or a reset: the read that follows says
/// which) or the wait is cancelled, then out again. A zero-byte read on the runtime's sockets would do the same wait,
/// but it would put the socket in the runtime's epoll set for good, whose thread would then wake for every event of a
/// caller the loop relays. The task completes only once the descriptor has left the loop's set (or the loop has
/// stopped), so the socket may then be read, adopted by the loop or disposed. One wait per instance.
/// </summary>
internal sealed class CallerReadiness : ILoopHandler
{
    private static readonly Action<object?> RegisterOnLoop = static state => ((CallerReadiness)state!).Register();
    private static readonly Action<object?> CancelOnLoop = static state => ((CallerReadiness)state!).Complete(ready: false);

    private readonly EventLoop _loop;
    private readonly int _fd;
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>On the loop only.</summary>
    private LoopRegistration _registration;
    private volatile bool _cancelled;

    private CallerReadiness(EventLoop loop, Socket caller)
    {
        _loop = loop;
        _fd = (int)caller.SafeHandle.DangerousGetHandle();
    }

    /// <summary>
    /// Waits on <paramref name="loop"/> until <paramref name="caller"/> (non-blocking, used only synchronously so far) is
    /// readable: the task completes when it is, and is cancelled when <paramref name="cancel"/> is or the loop stops.
    /// </summary>
    /// <returns>null when the loop has stopped (it takes no more work).</returns>
    public static Task? TryWait(EventLoop loop, Socket caller, CancellationToken cancel)
    {
        var wait = new CallerReadiness(loop, caller);
        if (!loop.Post(RegisterOnLoop, wait))
        {
            return null;
        }

        cancel.UnsafeRegister(static state => ((CallerReadiness)state!).OnCancelled(), wait);
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
            _registration = _loop.Register(_fd, this, LoopReadiness.Read);
        }
        catch (InvalidOperationException ex)
        {
            _done.TrySetException(ex); // the dispatch judges by the stream; the relay meets the socket's state
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

    /// <summary>On the loop: out of the set first, then the dispatch hears of it (on the thread pool).</summary>
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
