using System.Threading.Tasks.Sources;
using Tunnel2.Loops;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelClient.Relay.OnLoop;

/// <summary>
/// A body reader's wait for its stream's send credit, resumed on the loop: the grant (from the uplink's reader, usually
/// on this same loop) posts the completion there, and the reader's continuation runs inline in it. The stream's own
/// wait completes on the thread pool, so a body pumped on the loop paid a hop to a pool worker, and a post back to the
/// loop for its next frame, every time the caller's window ran dry. One per backend connection, reused by each body.
/// </summary>
internal sealed class LoopCreditWait : ISendCreditListener, IValueTaskSource
{
    private static readonly Action<object?> CompleteOnLoop = static state => ((LoopCreditWait)state!).Complete();

    private readonly EventLoop _loop;
    private ManualResetValueTaskSourceCore<bool> _wait; // completions run inline: on the loop

    public LoopCreditWait(EventLoop loop) => _loop = loop;

    /// <summary>Completes on the loop once <paramref name="stream"/> has credit again or has failed (the caller checks which).</summary>
    public ValueTask WaitAsync(IStreamHandle stream)
    {
        _wait.Reset();
        var wait = new ValueTask(this, _wait.Version);
        stream.NotifyOnSendCredit(this);
        return wait;
    }

    /// <summary>From the granting thread: the reader goes on on the loop; if the loop has stopped, here (it finds the stream failed).</summary>
    public void OnSendCredit()
    {
        if (!_loop.Post(CompleteOnLoop, this))
        {
            Complete();
        }
    }

    void IValueTaskSource.GetResult(short token) => _wait.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _wait.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _wait.OnCompleted(continuation, state, token, flags);

    private void Complete() => _wait.SetResult(true);
}
