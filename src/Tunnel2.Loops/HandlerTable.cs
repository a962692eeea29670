namespace Tunnel2.Loops;

/// <summary>
/// The loop's registered handlers by slot: an epoll event's data is (generation &lt;&lt; 32 | slot), so that dispatch is
/// an array index and a stale event (slot freed and reused within one batch) is recognised by its generation.
/// Slot 0 is never used: token 0 means "not registered", and the loop's wake-up descriptor uses it.
/// </summary>
internal sealed class HandlerTable
{
    private ILoopHandler?[] _handlers = new ILoopHandler?[64];
    private uint[] _generations = new uint[64];
    private readonly Stack<int> _free = new();
    private int _used = 1;

    public int Count { get; private set; }

    public ulong Add(ILoopHandler handler)
    {
        if (!_free.TryPop(out int slot))
        {
            if (_used == _handlers.Length)
            {
                Array.Resize(ref _handlers, _handlers.Length * 2);
                Array.Resize(ref _generations, _generations.Length * 2);
            }
            slot = _used++;
        }
        _handlers[slot] = handler;
        Count++;
        return ((ulong)++_generations[slot] << 32) | (uint)slot;
    }

    public ILoopHandler? Get(ulong token)
    {
        int slot = (int)(uint)token;
        return slot < _used && _generations[slot] == (uint)(token >> 32) ? _handlers[slot] : null;
    }

    public bool Remove(ulong token)
    {
        if (Get(token) is null)
        {
            return false;
        }
        int slot = (int)(uint)token;
        _handlers[slot] = null;
        _generations[slot]++;
        _free.Push(slot);
        Count--;
        return true;
    }

    /// <summary>Every live handler, copied out so that each may unregister itself while the caller goes through them.</summary>
    public List<ILoopHandler> Snapshot()
    {
        var live = new List<ILoopHandler>(Count);
        for (int slot = 1; slot < _used; slot++)
        {
            if (_handlers[slot] is { } handler)
            {
                live.Add(handler);
            }
        }
        return live;
    }
}
