using System.Threading.Tasks.Sources;

namespace Tunnel2.TunnelServer.Hosting.LoopTransport;

/// <summary>An awaitable, reused, that the socket's OnWritable completes on the loop; the drain awaits it after a partial send.</summary>
internal sealed class WritableSignal : IValueTaskSource
{
    private ManualResetValueTaskSourceCore<bool> _core; // inline continuations: the drain goes on in OnWritable itself

    public ValueTask WaitAsync()
    {
        _core.Reset();
        return new ValueTask(this, _core.Version);
    }

    public void Set() => _core.SetResult(true);

    public void GetResult(short token) => _core.GetResult(token);

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}
