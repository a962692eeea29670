using System.IO.Pipelines;
using Tunnel2.Loops;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// The pipes' scheduler for work that belongs on the loop: from the loop's own thread the work waits for the end of the
/// turn (so every response Kestrel flushed in this turn is sent once, after the reads of the turn); from any other
/// thread it is posted to the loop.
/// </summary>
internal sealed class LoopScheduler(EventLoop loop) : PipeScheduler
{
    private readonly TurnEndWork _atTurnEnd = new(loop);

    public EventLoop Loop => loop;

    public override void Schedule(Action<object?> action, object? state)
    {
        if (!loop.IsOnLoopThread)
        {
            loop.Post(action, state);
            return;
        }

        _atTurnEnd.Add(action, state);
    }
}
