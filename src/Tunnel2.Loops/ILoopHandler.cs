namespace Tunnel2.Loops;

/// <summary>Owns one descriptor in an <see cref="EventLoop"/>'s epoll set; called on the loop's thread only.</summary>
public interface ILoopHandler
{
    /// <summary>The descriptor is ready (level-triggered: called again each turn while it stays ready and watched).</summary>
    void OnReady(LoopReadiness ready);

    /// <summary>The loop is stopping: close the descriptor (and unregister it); nothing runs on the loop after this.</summary>
    void OnLoopStopping();
}
