namespace Tunnel2.Loops;

/// <summary>
/// A descriptor's place in its loop's epoll set. The token carries a generation, so that an event still queued in the
/// current batch for a descriptor that was removed (and whose slot was reused) is dropped, not delivered to the newcomer.
/// </summary>
public readonly record struct LoopRegistration(int Fd, ulong Token)
{
    public bool IsRegistered => Token != 0;
}
