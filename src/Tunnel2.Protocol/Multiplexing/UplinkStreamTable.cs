using System.Collections.Concurrent;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink's open streams by id, and the highest id seen. Ids only increase (the opener checks that), so a frame for
/// an id at or below <see cref="LastStreamId"/> that is not in the table belongs to a finished stream, and one above it
/// to a stream that was never opened.
/// </summary>
internal sealed class UplinkStreamTable
{
    private readonly ConcurrentDictionary<uint, UplinkStream> _streams = new();

    /// <summary>Entries in <see cref="_streams"/>; kept apart because ConcurrentDictionary.Count takes every bucket lock.</summary>
    private int _count;

    private uint _lastStreamId;

    public int Count => Volatile.Read(ref _count);

    public uint LastStreamId => Volatile.Read(ref _lastStreamId);

    /// <summary>Adds a stream whose id is above every id before it (the caller checked, under its own lock).</summary>
    public void Add(UplinkStream stream)
    {
        _streams[stream.Id] = stream; // ids only increase, so this never replaces an entry
        Interlocked.Increment(ref _count);
        Volatile.Write(ref _lastStreamId, stream.Id);
    }

    public bool TryGet(uint id, out UplinkStream? stream) => _streams.TryGetValue(id, out stream);

    /// <summary>Removes exactly this stream (not a later one that might share its id); false when it was not there.</summary>
    public bool Remove(UplinkStream stream)
    {
        if (!_streams.TryRemove(new KeyValuePair<uint, UplinkStream>(stream.Id, stream)))
        {
            return false;
        }

        Interlocked.Decrement(ref _count);
        return true;
    }

    /// <summary>
    /// Calls <paramref name="visit"/> for each stream in the table at some moment during the walk (a snapshot-free
    /// walk: streams added or removed meanwhile may or may not be seen), holding it for the visit: a stream that finishes
    /// and serves another exchange meanwhile is visited on that one (the walk is outside the reader loop, so it may not
    /// rely on the pool's reader-side clearing).
    /// </summary>
    public void ForEach<TState>(Action<UplinkStream, TState> visit, TState state)
    {
        foreach (KeyValuePair<uint, UplinkStream> entry in _streams)
        {
            UplinkStream stream = entry.Value;
            if (!stream.TryHold())
            {
                continue;
            }

            try
            {
                visit(stream, state);
            }
            finally
            {
                stream.Release();
            }
        }
    }
}
