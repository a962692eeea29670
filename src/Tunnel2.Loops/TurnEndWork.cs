namespace Tunnel2.Loops;

/// <summary>
/// Work added on the loop's own thread and run at the end of that turn, in the order added: what a pipe scheduler on
/// the loop does with the continuations it is given there (the public listener's pipes, the server uplink's hand-over
/// wake). Work run at the turn's end may add more (a drain that found more to send): it runs in the same turn, since a
/// deferral made during the turn's end would only run after the loop's next wait.
/// </summary>
public sealed class TurnEndWork(EventLoop loop) : ILoopTurnEnd
{
    private List<(Action<object?> Work, object? State)> _pending = [];
    private List<(Action<object?> Work, object? State)> _running = [];
    private bool _deferred;

    /// <summary>Runs <paramref name="work"/> at the end of this turn. On the loop thread only.</summary>
    public void Add(Action<object?> work, object? state)
    {
        _pending.Add((work, state));
        if (!_deferred)
        {
            _deferred = true;
            loop.DeferToTurnEnd(this);
        }
    }

    void ILoopTurnEnd.OnTurnEnd()
    {
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
