using System.Threading.Tasks.Sources;
using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Credit for the body bytes one stream may still send; the peer grants more with WindowUpdate frames.
/// One sender per stream waits on it at a time, so the window is itself that sender's awaitable, reused for every wait:
/// a grant hands the waiter its share at once, and a wait allocates nothing (an upload waits once per window's worth).
/// </summary>
internal sealed class SendWindow : IValueTaskSource<int>
{
    private static readonly Action<object?, CancellationToken> CancelWaiter = static (state, token) => ((SendWindow)state!).Cancel(token);

    private readonly Lock _sync = new();
    private ManualResetValueTaskSourceCore<int> _wait = new() { RunContinuationsAsynchronously = true };
    private long _available;
    private bool _waiting;
    private int _wanted;
    private CancellationToken _waitToken;
    private CancellationTokenRegistration _waitRegistration;
    private ISendCreditListener? _listener;
    private Exception? _fault;

    public SendWindow(int initial) => _available = initial;

    /// <summary>Starts over for a new exchange (nobody waits: the stream it belongs to is finished).</summary>
    public void Reset(int initial)
    {
        CancellationTokenRegistration registration;
        lock (_sync)
        {
            registration = EndWait();
            _available = initial;
            _listener = null;
            _fault = null;
        }

        registration.Unregister();
    }

    /// <summary>Waits until the peer allows at least one more byte; returns how many (at most <paramref name="max"/>).</summary>
    public ValueTask<int> AcquireAsync(int max, CancellationToken cancellationToken)
    {
        short version;
        lock (_sync)
        {
            if (_fault is not null)
            {
                return ValueTask.FromException<int>(_fault);
            }

            if (_available > 0)
            {
                return new ValueTask<int>(Take(max));
            }

            _wait.Reset();
            version = _wait.Version;
            _waiting = true;
            _wanted = max;
            _waitToken = cancellationToken;
        }

        if (cancellationToken.CanBeCanceled)
        {
            Register(version, cancellationToken);
        }

        return new ValueTask<int>(this, version);
    }

    /// <summary>Takes up to <paramref name="max"/> bytes of credit without waiting: 0 when there is none (or the stream failed).</summary>
    public int TryAcquire(int max)
    {
        lock (_sync)
        {
            return _fault is not null || _available <= 0 ? 0 : Take(max);
        }
    }

    /// <summary>
    /// Tells <paramref name="listener"/> once, on the granting thread, when credit is there (at once, on this thread, if
    /// it is already) or the stream failed: for a sender that cannot wait on a task (an event loop).
    /// </summary>
    public void NotifyOnCredit(ISendCreditListener listener)
    {
        lock (_sync)
        {
            if (_available <= 0 && _fault is null)
            {
                _listener = listener;
                return;
            }
        }

        listener.OnSendCredit();
    }

    /// <summary>Whether an acquire would return at once (a hint: the peer's grants only add to it).</summary>
    public bool HasCredit => Volatile.Read(ref _available) > 0;

    /// <summary>Gives back credit that was acquired but not used.</summary>
    public void Return(int unused) => Grant(unused);

    /// <exception cref="ProtocolViolationException">The peer granted more than a window can hold.</exception>
    public void Grant(int increment)
    {
        ISendCreditListener? listener;
        CancellationTokenRegistration registration = default;
        lock (_sync)
        {
            _available += increment;
            if (_available > int.MaxValue)
            {
                throw new ProtocolViolationException("Flow-control window grew beyond 2^31-1 bytes.");
            }

            if (_waiting && _available > 0)
            {
                registration = EndWait();
                _wait.SetResult(Take(_wanted)); // continuations run on the thread pool, never under this lock
            }

            listener = _listener;
            _listener = null;
        }

        registration.Unregister();
        listener?.OnSendCredit();
    }

    public void Fault(Exception reason)
    {
        ISendCreditListener? listener;
        CancellationTokenRegistration registration = default;
        lock (_sync)
        {
            _fault ??= reason;
            if (_waiting)
            {
                registration = EndWait();
                _wait.SetException(reason);
            }

            listener = _listener;
            _listener = null;
        }

        registration.Unregister();
        listener?.OnSendCredit();
    }

    int IValueTaskSource<int>.GetResult(short token) => _wait.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _wait.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _wait.OnCompleted(continuation, state, token, flags);

    private int Take(int max)
    {
        int granted = (int)Math.Min(max, _available);
        _available -= granted;
        return granted;
    }

    /// <summary>Registers outside the lock (a token already cancelled runs the callback at once); unregisters if the wait ended meanwhile.</summary>
    private void Register(short version, CancellationToken cancellationToken)
    {
        CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(CancelWaiter, this);
        lock (_sync)
        {
            if (_waiting && _wait.Version == version)
            {
                _waitRegistration = registration;
                return;
            }
        }

        registration.Unregister();
    }

    /// <summary>
    /// A cancelled token ends the wait it was given for. Unregister does not wait for a callback under way, so one may run
    /// after its wait ended: it only ends a wait that has its token (a later wait for the same cancelled request).
    /// </summary>
    private void Cancel(CancellationToken token)
    {
        CancellationTokenRegistration registration;
        lock (_sync)
        {
            if (!_waiting || _waitToken != token)
            {
                return;
            }

            registration = EndWait();
            _wait.SetException(new OperationCanceledException(token));
        }

        registration.Unregister();
    }

    /// <summary>Under the lock: the wait is over; returns its registration, to unregister outside the lock.</summary>
    private CancellationTokenRegistration EndWait()
    {
        CancellationTokenRegistration registration = _waitRegistration;
        _waiting = false;
        _waitToken = default;
        _waitRegistration = default;
        return registration;
    }
}
