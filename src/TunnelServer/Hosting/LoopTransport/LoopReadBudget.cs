using Tunnel2.Loops;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// <c>TunnelServer:Public:LoopReadBudget</c>: the bytes a listener's connections may read in one loop turn once past
/// their first read (request bodies, later requests). A connection's first read never waits for it, so a new caller's
/// head is read, parsed and forwarded in the turn that finds it; a connection that finds the budget spent reads in a
/// later turn (its socket stays ready: epoll reports it again). Spent only on the loop; renewed at each turn's end.
/// </summary>
internal sealed class LoopReadBudget(EventLoop loop, int bytesPerTurn) : ILoopTurnEnd
{
    private int _spent;
    private bool _deferred;

    /// <summary>Whether a connection past its first read must wait for the next turn.</summary>
    public bool IsSpent => bytesPerTurn > 0 && _spent >= bytesPerTurn;

    public void Spend(int bytes)
    {
        if (bytesPerTurn <= 0 || bytes <= 0)
        {
            return;
        }

        _spent += bytes;
        if (!_deferred)
        {
            _deferred = true;
            loop.DeferToTurnEnd(this);
        }
    }

    public void OnTurnEnd()
    {
        _spent = 0;
        _deferred = false;
    }
}
