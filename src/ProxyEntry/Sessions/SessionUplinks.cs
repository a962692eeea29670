using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>The replicas of one session: an immutable array swapped on change, and a round-robin cursor.</summary>
internal sealed class SessionUplinks
{
    private readonly Dictionary<string, Uplink> _byInstance = new(StringComparer.Ordinal);
    private Uplink[] _members = [];
    private uint _cursor;

    public Uplink[] Snapshot => Volatile.Read(ref _members);

    /// <summary>Adds the uplink; an earlier uplink of the same client instance is removed and returned (not closed).</summary>
    /// <remarks>Callers serialise Add and Remove.</remarks>
    public Uplink? Add(Uplink uplink, string? instanceId)
    {
        Uplink? replaced = null;
        if (instanceId is not null)
        {
            if (_byInstance.TryGetValue(instanceId, out Uplink? previous) && !ReferenceEquals(previous, uplink))
            {
                Remove(previous);
                replaced = previous;
            }

            _byInstance[instanceId] = uplink;
        }

        Uplink[] current = _members;
        var next = new Uplink[current.Length + 1];
        current.CopyTo(next, 0);
        next[^1] = uplink;
        Volatile.Write(ref _members, next);
        return replaced;
    }

    /// <summary>Removes the uplink; returns how many remain.</summary>
    /// <remarks>Callers serialise Add and Remove.</remarks>
    public int Remove(Uplink uplink)
    {
        foreach (KeyValuePair<string, Uplink> entry in _byInstance)
        {
            if (ReferenceEquals(entry.Value, uplink))
            {
                _byInstance.Remove(entry.Key);
                break;
            }
        }

        Uplink[] current = _members;
        int index = Array.IndexOf(current, uplink);
        if (index < 0)
        {
            return current.Length;
        }

        var next = new Uplink[current.Length - 1];
        Array.Copy(current, 0, next, 0, index);
        Array.Copy(current, index + 1, next, index, current.Length - index - 1);
        Volatile.Write(ref _members, next);
        return next.Length;
    }

    public Uplink? Pick()
    {
        Uplink[] members = Volatile.Read(ref _members);
        int count = members.Length;
        if (count == 1)
        {
            return members[0].AcceptsNewStreams ? members[0] : null;
        }

        // One cursor step per pick, then a walk from there: stepping the shared cursor for every candidate would let
        // concurrent picks skip the one replica that still accepts streams while another drains. A replica at its
        // stream limit is passed over for one with room, and only picked when every replica is full (the open then
        // reports the limit, which the caller answers with 503).
        uint start = Interlocked.Increment(ref _cursor);
        Uplink? full = null;
        for (uint offset = 0; offset < (uint)count; offset++)
        {
            Uplink candidate = members[(int)((start + offset) % (uint)count)];
            if (candidate.HasRoomForStream)
            {
                return candidate;
            }

            if (full is null && candidate.AcceptsNewStreams)
            {
                full = candidate;
            }
        }

        return full;
    }
}
