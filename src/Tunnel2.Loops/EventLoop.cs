using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using Tunnel2.Loops.Interop;
using Tunnel2.Loops.Scheduling;

namespace Tunnel2.Loops;

/// <summary>
/// One dedicated thread that runs to completion over its own epoll set (issue 52, design (a)): ready descriptors,
/// then work posted from other threads, then due timers, then the turn-end handlers, then it waits again. Everything
/// registered with a loop is touched on its thread only, so handlers need no locks, and a message costs no thread
/// hand-off. Level-triggered, as the prototype that measured best (docs/benchmarks/2026-11-29-relay-prototypes.md).
/// Linux x86-64 only (<see cref="IsSupported"/>); elsewhere the processes keep the runtime's socket engine.
/// Nothing blocking may run on the thread: see <c>Tunnel2.Loops.Guard.LoopGuard</c>.
/// </summary>
public sealed unsafe partial class EventLoop : IDisposable
{
    private const int MaxEvents = 256;
    private const int ReceiveBufferSize = 64 * 1024;

    [ThreadStatic]
    private static EventLoop? t_current;

    private readonly int _epoll;
    private readonly Wakeup _wakeup;
    private readonly HandlerTable _handlers = new();
    private readonly WorkQueue _posted = new();
    private readonly TimerList _timers = new();
    private readonly List<ILoopTurnEnd> _turnEnd = [];
    private readonly EpollEvent[] _events = GC.AllocateArray<EpollEvent>(MaxEvents, pinned: true);
    private readonly Action<Exception> _onFault;
    private readonly Thread _thread;
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile bool _stopRequested;
    private volatile bool _stoppedFlag;

    /// <param name="onFault">Called on the loop with an exception a callback threw; the loop goes on. Without it, the
    /// exception ends the loop's thread and so the process: a handler that threw has lost its state.</param>
    public EventLoop(string name, Action<Exception>? onFault = null)
    {
        if (!IsSupported)
        {
            throw new PlatformNotSupportedException("The event loop needs Linux on x86-64 (epoll); use the runtime's sockets elsewhere.");
        }
        _onFault = onFault ?? (static fault => ExceptionDispatchInfo.Capture(fault).Throw());
        _epoll = LibC.epoll_create1(LibC.CloExec);
        if (_epoll < 0)
        {
            throw new InvalidOperationException($"epoll_create1 failed: errno {LibC.Errno}");
        }
        _wakeup = new Wakeup();
        Control(LibC.EpollCtlAdd, _wakeup.Fd, LibReadiness(LoopReadiness.Read), token: 0);
        ReceiveBuffer = GC.AllocateUninitializedArray<byte>(ReceiveBufferSize, pinned: true);
        _thread = new Thread(Run) { Name = name, IsBackground = true };
        _thread.Start();
    }

    /// <summary>Whether this platform has the loop: Linux on x86-64 (epoll_event's packed layout is declared for it).</summary>
    public static bool IsSupported => OperatingSystem.IsLinux() && RuntimeInformation.ProcessArchitecture == Architecture.X64;

    /// <summary>The loop whose thread is running this code, if any.</summary>
    public static EventLoop? Current => t_current;

    /// <summary>Whether this code runs on some loop's thread, where nothing may block.</summary>
    public static bool IsLoopThread => t_current is not null;

    public bool IsOnLoopThread => t_current == this;

    /// <summary>Completes when the loop's thread has closed every descriptor and stopped.</summary>
    public Task Stopped => _stopped.Task;

    /// <summary>Registered descriptors (for tests and diagnostics; read it on the loop).</summary>
    public int RegisteredCount => _handlers.Count;

    /// <summary>The loop's one receive buffer, pinned, lent to whichever socket reads now: data read into it is handled
    /// before the next read, so the loop needs one buffer, not one per connection.</summary>
    internal byte[] ReceiveBuffer { get; }

    /// <summary>Runs <paramref name="work"/> on the loop, soon, in the order posted. From any thread.</summary>
    /// <returns>false once the loop has stopped (the work will not run).</returns>
    public bool Post(Action<object?> work, object? state)
    {
        if (_stopRequested)
        {
            return false;
        }
        _posted.Enqueue(new WorkItem(work, state));
        if (t_current != this)
        {
            _wakeup.Signal();
        }
        return true;
    }

    public bool Post(Action work) => Post(static state => ((Action)state!)(), work);

    /// <summary>Runs <paramref name="work"/> on the loop after <paramref name="delay"/>. From any thread.</summary>
    public LoopTimer Schedule(TimeSpan delay, Action<object?> work, object? state)
    {
        var timer = new LoopTimer(Environment.TickCount64 + (long)delay.TotalMilliseconds, work, state);
        if (t_current == this)
        {
            _timers.Add(timer);
        }
        else
        {
            Post(static item => { var t = (LoopTimer)item!; t_current!._timers.Add(t); }, timer);
        }
        return timer;
    }

    /// <summary>Calls <paramref name="handler"/> once at the end of this turn. On the loop; the caller asks once per turn.</summary>
    public void DeferToTurnEnd(ILoopTurnEnd handler)
    {
        AssertOnLoop();
        _turnEnd.Add(handler);
    }

    /// <summary>Puts a non-blocking descriptor in the epoll set. On the loop.</summary>
    public LoopRegistration Register(int fd, ILoopHandler handler, LoopReadiness interest)
    {
        AssertOnLoop();
        ulong token = _handlers.Add(handler);
        if (!TryControl(LibC.EpollCtlAdd, fd, LibReadiness(interest), token, out int errno))
        {
            _handlers.Remove(token);
            throw new InvalidOperationException($"epoll_ctl(ADD, {fd}) failed: errno {errno}");
        }
        return new LoopRegistration(fd, token);
    }

    /// <summary>Changes what the descriptor is watched for; <see cref="LoopReadiness.None"/> keeps it registered but silent
    /// (hang-ups and errors are still reported, as epoll always does).</summary>
    public void Modify(LoopRegistration registration, LoopReadiness interest) =>
        Control(LibC.EpollCtlMod, registration.Fd, LibReadiness(interest), registration.Token);

    /// <summary>Takes the descriptor out of the epoll set (before it is closed); events already fetched for it are dropped.</summary>
    public void Unregister(LoopRegistration registration)
    {
        if (_handlers.Remove(registration.Token))
        {
            TryControl(LibC.EpollCtlDel, registration.Fd, 0, 0, out _);
        }
    }

    /// <summary>Stops the loop: posted work still queued runs, then every handler is told to close, then the thread ends.
    /// From any thread; from another one, it waits for the loop to end.</summary>
    public void Dispose()
    {
        _stopRequested = true;
        if (t_current == this)
        {
            return;
        }
        if (!_stoppedFlag)
        {
            _wakeup.Signal();
            _thread.Join();
        }
    }

    internal void AssertOnLoop()
    {
        if (t_current != this)
        {
            throw new InvalidOperationException("This call belongs on the event loop's own thread; post it there.");
        }
    }

    private static uint LibReadiness(LoopReadiness interest) => (uint)interest;

    private void Control(int op, int fd, uint events, ulong token)
    {
        if (!TryControl(op, fd, events, token, out int errno))
        {
            throw new InvalidOperationException($"epoll_ctl({op}, {fd}) failed: errno {errno}");
        }
    }

    private bool TryControl(int op, int fd, uint events, ulong token, out int errno)
    {
        var ev = new EpollEvent { Events = events, Data = token };
        errno = LibC.epoll_ctl(_epoll, op, fd, &ev) == 0 ? 0 : LibC.Errno;
        return errno == 0;
    }
}
