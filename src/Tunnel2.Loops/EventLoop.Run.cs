using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops;

/// <summary>The loop's thread: its turns and its orderly end.</summary>
public sealed unsafe partial class EventLoop
{
    private void Run()
    {
        t_current = this;
        try
        {
            while (!_stopRequested)
            {
                Turn();
            }
            Stop();
            _stopped.TrySetResult();
        }
        catch (Exception fault)
        {
            _stopped.TrySetException(fault);
            throw;
        }
        finally
        {
            _stoppedFlag = true;
            t_current = null;
        }
    }

    private void Turn()
    {
        // Work deferred by the last turn's end (one turn-end handler waking another, e.g. the public transport's drain
        // resuming a write that wakes the uplink's writer) is due now: the wait only polls then, since no event may follow.
        int timeout = _posted.IsEmpty && _turnEnd.Count == 0 ? _timers.MillisecondsToNext(Environment.TickCount64) : 0;
        int count;
        fixed (EpollEvent* events = _events)
        {
            count = LibC.epoll_wait(_epoll, events, MaxEvents, timeout);
        }
        if (count < 0 && LibC.Errno != LibC.EIntr)
        {
            throw new InvalidOperationException($"epoll_wait failed: errno {LibC.Errno}");
        }
        for (int i = 0; i < count; i++)
        {
            Dispatch(_events[i]);
        }
        _posted.RunQueued(_onFault);
        _timers.RunDue(Environment.TickCount64, _onFault);
        RunTurnEnd();
    }

    private void Dispatch(EpollEvent ready)
    {
        if (ready.Data == 0)
        {
            _wakeup.Reset();
            return;
        }
        if (_handlers.Get(ready.Data) is not { } handler)
        {
            return;
        }
        try
        {
            handler.OnReady((LoopReadiness)ready.Events);
        }
        catch (Exception fault)
        {
            _onFault(fault);
        }
    }

    private void RunTurnEnd()
    {
        // A turn-end handler may defer again (for the next turn): take this turn's list by count.
        int count = _turnEnd.Count;
        for (int i = 0; i < count; i++)
        {
            try
            {
                _turnEnd[i].OnTurnEnd();
            }
            catch (Exception fault)
            {
                _onFault(fault);
            }
        }
        _turnEnd.RemoveRange(0, count);
    }

    /// <summary>On the loop, once: what was posted runs, every handler closes its descriptor, then the loop's own close.</summary>
    private void Stop()
    {
        _posted.RunQueued(_onFault);
        foreach (ILoopHandler handler in _handlers.Snapshot())
        {
            try
            {
                handler.OnLoopStopping();
            }
            catch (Exception fault)
            {
                _onFault(fault);
            }
        }
        _timers.Clear();
        _turnEnd.Clear();
        _wakeup.Dispose();
        LibC.close(_epoll);
    }
}
