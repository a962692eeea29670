using System.Runtime.CompilerServices;
using Tunnel2.Loops;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>
/// <c>await new LoopHop(loop)</c>: what follows runs on the loop's thread, in its next turn's posted work (at once when
/// already there). Allocates nothing: the continuation is the awaiting state machine's own.
/// </summary>
internal readonly struct LoopHop(EventLoop loop) : ICriticalNotifyCompletion
{
    public bool IsCompleted => loop.IsOnLoopThread;

    public LoopHop GetAwaiter() => this;

    public void GetResult()
    {
    }

    public void OnCompleted(Action continuation) => UnsafeOnCompleted(continuation);

    public void UnsafeOnCompleted(Action continuation)
    {
        if (!loop.Post(static state => ((Action)state!)(), continuation))
        {
            // The loop has stopped and closed every descriptor: go on where the connection will fail at its first read.
            ThreadPool.UnsafeQueueUserWorkItem(static state => state(), continuation, preferLocal: false);
        }
    }
}
