using System.IO.Pipelines;
using Tunnel2.Loops;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// The pipes' scheduler for work that belongs on the loop: from the loop's own thread the work waits for the end of the
/// turn (so every response Kestrel flushed in this turn is sent once, after the reads of the turn); from any other
/// thread it is posted to the loop.
/// </summary>
internal sealed class LoopScheduler(EventLoop loop) : PipeScheduler, ILoopTurnEnd
{
    private List<(Action<object?> Work, object? State)> _pending = [];
    private List<(Action<object?> Work, object? State)> _running = [];
    private bool _deferred;

    public EventLoop Loop => loop;

    public override void Schedule(Action<object?> action, object? state)
    {
        if (!loop.IsOnLoopThread)
        {
            loop.Post(action, state);
            return;
        }

        _pending.Add((action, state));
        if (!_deferred)
        {
            _deferred = true;
            loop.DeferToTurnEnd(this);
        }
    }

    public void OnTurnEnd()
    {
        // Work run here may schedule more (a drain that found more to send): run it in this turn too, since a deferral
        // made now would only run after the loop's next wait.
        while (_pending.Count > 0)
        {
            (_pending, _running) = (_running, _pending);
            foreach ((Action<object?> work, object? state) in _running)
            {
                work(state);
            }

            _running.Clear();
        }

        _deferred = false;
    }
}
