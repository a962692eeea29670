using System.Collections.Concurrent;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// Finished <see cref="UplinkStream"/> objects of one uplink, kept for the next exchange (Kestrel's HTTP/2 keeps its
/// streams the same way). A stream comes here in two steps:
/// <list type="number">
/// <item>its last hold is let go (<see cref="UplinkStream"/>'s lifetime: the table, the owner, the writer's lane and
/// every body loop are done with it) and it is put on the <em>finished</em> queue, from any thread;</item>
/// <item>the uplink's reader loop, between two batches of frames, clears each finished stream and moves it to the free
/// list (<see cref="RecycleFinished"/>). The reader is the one job that reaches streams through the table without a hold,
/// and it never holds one across batches, so no frame can be handed to a stream that has already been cleared.</item>
/// </list>
/// </summary>
internal sealed class UplinkStreamPool
{
    /// <summary>How many free streams an uplink keeps (Kestrel keeps 100 per HTTP/2 connection).</summary>
    public const int DefaultCapacity = 100;

    private readonly ConcurrentQueue<UplinkStream> _finished = new();
    private readonly Lock _sync = new();
    private readonly UplinkStream[] _free;
    private int _freeCount;

    public UplinkStreamPool(int capacity) => _free = new UplinkStream[capacity];

    /// <summary>Free streams right now (for tests and diagnostics).</summary>
    public int FreeCount
    {
        get
        {
            lock (_sync)
            {
                return _freeCount;
            }
        }
    }

    /// <summary>Streams whose holds are all let go, waiting for the reader loop to clear them.</summary>
    public bool HasFinished => !_finished.IsEmpty;

    /// <summary>A stream's last hold was let go: it may be cleared once the reader is between frames.</summary>
    public void OnFinished(UplinkStream stream)
    {
        if (_free.Length > 0)
        {
            _finished.Enqueue(stream);
        }
    }

    /// <summary>Called by the reader loop only, between batches of frames.</summary>
    public void RecycleFinished()
    {
        while (_finished.TryDequeue(out UplinkStream? stream))
        {
            if (!stream.TryClearForReuse())
            {
                continue;
            }

            lock (_sync)
            {
                if (_freeCount < _free.Length)
                {
                    _free[_freeCount++] = stream;
                }
            }
        }
    }

    public bool TryRent(out UplinkStream? stream)
    {
        lock (_sync)
        {
            if (_freeCount == 0)
            {
                stream = null;
                return false;
            }

            stream = _free[--_freeCount];
            _free[_freeCount] = null!;
            return true;
        }
    }
}
