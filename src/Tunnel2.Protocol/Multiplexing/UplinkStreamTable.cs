using System.Collections.Concurrent;
using Tunnel2.Protocol.Draining;

namespace Tunnel2.Protocol.Multiplexing;

/// <summary>
/// The uplink's open streams by id, and the highest id seen. Ids only increase (the opener checks that), so a frame for
/// an id at or below <see cref="LastStreamId"/> that is not in the table belongs to a finished stream, and one above it
/// to a stream that was never opened.
/// </summary>
internal sealed class UplinkStreamTable
{
    private readonly ConcurrentDictionary<uint, UplinkStream> _streams = new();

    /// <summary>
    /// Entries in <see cref="_streams"/>; kept apart because ConcurrentDictionary.Count takes every bucket lock, and a
    /// counter so that a drain is woken by the last stream's removal (<see cref="WaitEmptyAsync"/>).
    /// </summary>
    private readonly InFlightCounter _count = new();

    private uint _lastStreamId;

    public int Count => (int)_count.Count;

    public uint LastStreamId => Volatile.Read(ref _lastStreamId);

    /// <summary>Adds a stream whose id is above every id before it (the caller checked, under its own lock).</summary>
    public void Add(UplinkStream stream)
    {
        _streams[stream.Id] = stream; // ids only increase, so this never replaces an entry
        _count.Increment();
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

        _count.Decrement();
        return true;
    }

    /// <summary>True once no stream is open; false when <paramref name="timeout"/> passed or <paramref name="cancellationToken"/> fired first.</summary>
    public Task<bool> WaitEmptyAsync(TimeSpan timeout, CancellationToken cancellationToken) => _count.WaitIdleAsync(timeout, cancellationToken);

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
