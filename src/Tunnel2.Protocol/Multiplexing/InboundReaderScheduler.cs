using System.IO.Pipelines;
using Tunnel2.Loops;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The inbound pipes' reader scheduler for an uplink on an event loop. The one wake that the reader itself asks for on
/// the loop, when it hands an HTTP body back to the body's copy loop because the destination's flush did not complete
/// at once (<see cref="UplinkStream"/>'s HTTP body path), runs at the end of the loop's turn on the loop: the copy loop
/// only awaits that flush, which completes on the loop anyway when the server's public listener is on the loop, so a
/// pool worker woken for it did nothing but cost a hand-off each way (issue 52, the server's download path). Every
/// other wake (the peer's bytes for a body read, a wait for input, a reset) goes to the thread pool as before. The
/// server's uplinks only: there the copy loop already goes on from the loop once that flush completes.
/// </summary>
internal sealed class InboundReaderScheduler(EventLoop loop) : PipeScheduler
{
    private readonly TurnEndWork _atTurnEnd = new(loop);
    private bool _handingOver;

    /// <summary>Whether the calling code runs on the loop, where <see cref="WakeAtTurnEnd"/> applies.</summary>
    public bool IsOnLoopThread => loop.IsOnLoopThread;

    /// <summary>
    /// Cancels <paramref name="reader"/>'s pending read with its continuation deferred to the end of this turn, on the
    /// loop (the pipe schedules it inside the call, on this thread). On the loop thread only.
    /// </summary>
    public void WakeAtTurnEnd(PipeReader reader)
    {
        _handingOver = true;
        try
        {
            reader.CancelPendingRead();
        }
        finally
        {
            _handingOver = false;
        }
    }

    public override void Schedule(Action<object?> action, object? state)
    {
        // _handingOver is only ever true on the loop thread, inside WakeAtTurnEnd.
        if (!_handingOver || !loop.IsOnLoopThread)
        {
            ThreadPool.Schedule(action, state);
            return;
        }

        _atTurnEnd.Add(action, state);
    }
}
