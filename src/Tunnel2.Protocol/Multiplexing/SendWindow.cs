using Tunnel2.Protocol.Frames;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Credit for the body bytes one stream may still send; the peer grants more with WindowUpdate frames.
/// One sender per stream waits on it at a time.
/// </summary>
internal sealed class SendWindow
{
    private readonly Lock _sync = new();
    private long _available;
    private TaskCompletionSource? _waiter;
    private ISendCreditListener? _listener;
    private Exception? _fault;

    public SendWindow(int initial) => _available = initial;

    /// <summary>Starts over for a new exchange (nobody waits: the stream it belongs to is finished).</summary>
    public void Reset(int initial)
    {
        lock (_sync)
        {
            _available = initial;
            _waiter = null;
            _listener = null;
            _fault = null;
        }
    }

    public async ValueTask<int> AcquireAsync(int max, CancellationToken cancellationToken)
    {
        while (true)
        {
            TaskCompletionSource waiter;
            lock (_sync)
            {
                if (_fault is not null)
                {
                    throw _fault;
                }

                if (_available > 0)
                {
                    int granted = (int)Math.Min(max, _available);
                    _available -= granted;
                    return granted;
                }

                waiter = _waiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }

            await waiter.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Takes up to <paramref name="max"/> bytes of credit without waiting: 0 when there is none (or the stream failed).</summary>
    public int TryAcquire(int max)
    {
        lock (_sync)
        {
            if (_fault is not null || _available <= 0)
            {
                return 0;
            }

            int granted = (int)Math.Min(max, _available);
            _available -= granted;
            return granted;
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
        TaskCompletionSource? waiter;
        ISendCreditListener? listener;
        lock (_sync)
        {
            _available += increment;
            if (_available > int.MaxValue)
            {
                throw new ProtocolViolationException("Flow-control window grew beyond 2^31-1 bytes.");
            }

            waiter = _waiter;
            _waiter = null;
            listener = _listener;
            _listener = null;
        }

        waiter?.TrySetResult();
        listener?.OnSendCredit();
    }

    public void Fault(Exception reason)
    {
        TaskCompletionSource? waiter;
        ISendCreditListener? listener;
        lock (_sync)
        {
            _fault ??= reason;
            waiter = _waiter;
            _waiter = null;
            listener = _listener;
            _listener = null;
        }

        waiter?.TrySetException(reason);
        listener?.OnSendCredit();
    }
}
