using Tunnel2.Loops.Interop;

namespace Tunnel2.Loops.Scheduling;

/// <summary>
/// An eventfd in the loop's epoll set that other threads write to wake the loop. Signals are coalesced: only the first
/// signal after the loop last looked writes to the descriptor, so a burst of posts costs one write and one wake.
/// </summary>
internal sealed unsafe class Wakeup : IDisposable
{
    private readonly Lock _closing = new();
    private int _pending;
    private bool _closed;

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
            // Under the lock: a poster that raced the loop's end must not write to a descriptor number already reused.
            lock (_closing)
            {
                if (!_closed)
                {
                    ulong one = 1;
                    LibC.write(Fd, &one, sizeof(ulong));
                }
            }
        }
    }

    /// <summary>On the loop, before it takes the posted work: a post from now on signals again.</summary>
    public void Reset()
    {
        // Read first, then clear: cleared first, a signal landing between the two writes a count that the read then
        // swallows, leaving _pending at 1 with nothing in the descriptor, so every later signal writes nothing and the
        // loop sleeps with work queued (and a Dispose never wakes it). In this order a signal before the clear writes
        // nothing but its work is already queued, and the loop looks at the queue after this; one after it writes.
        ulong count;
        LibC.read(Fd, &count, sizeof(ulong));
        // A full fence, not a plain store: the loop's next look at the queue must not be ordered before this store.
        Interlocked.Exchange(ref _pending, 0);
    }

    public void Dispose()
    {
        lock (_closing)
        {
            _closed = true;
            LibC.close(Fd);
        }
    }
}
