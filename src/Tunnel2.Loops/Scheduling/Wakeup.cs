using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Scheduling;

/// <summary>
/// An eventfd in the loop's epoll set that other threads write to wake the loop. Signals are coalesced: only the first
/// signal after the loop last looked writes to the descriptor, so a burst of posts costs one write and one wake.
/// </summary>
internal sealed unsafe class Wakeup : IDisposable
{
    private int _pending;

    public Wakeup()
    {
        Fd = LibC.eventfd(0, LibC.NonBlock | LibC.CloExec);
        if (Fd < 0)
        {
            throw new InvalidOperationException($"eventfd failed: errno {LibC.Errno}");
        }
    }

    public int Fd { get; }

    public void Signal()
    {
        if (Interlocked.Exchange(ref _pending, 1) == 0)
        {
            ulong one = 1;
            LibC.write(Fd, &one, sizeof(ulong));
        }
    }

    /// <summary>On the loop, before it takes the posted work: a post from now on signals again.</summary>
    public void Reset()
    {
        Volatile.Write(ref _pending, 0);
        ulong count;
        LibC.read(Fd, &count, sizeof(ulong));
    }

    public void Dispose() => LibC.close(Fd);
}
