namespace Tunnel2.Balancing;

/// <summary>
/// The members one pick chooses among (the clients of a session's HTTP side, of its TCP port, or a client's backends)
/// and the state the strategies share: an immutable snapshot swapped whole on change, with the weighted schedule built
/// for it, and the round-robin cursor. Picks read the snapshot without a lock; changes are serialised here.
/// </summary>
public sealed class MemberSet<T>
    where T : class, IBalancingMember
{
    private readonly Lock _changes = new();
    private Members _members = new([], []);
    private uint _cursor;

    public MemberSet(BalancingStrategy strategy, T[]? initial = null)
    {
        Strategy = strategy;
        if (initial is not null)
        {
            Publish(initial);
        }
    }

    public BalancingStrategy Strategy { get; }

    /// <summary>The members now: never changed in place, so a caller may walk it while members come and go.</summary>
    public T[] Snapshot => Volatile.Read(ref _members).All;

    public int Count => Snapshot.Length;

    /// <summary>Adds <paramref name="member"/> at the end.</summary>
    public void Add(T member)
    {
        lock (_changes)
        {
            Publish([.. _members.All, member]);
        }
    }

    /// <summary>Removes <paramref name="member"/> (by reference); returns how many remain.</summary>
    public int Remove(T member)
    {
        lock (_changes)
        {
            T[] current = _members.All;
            int index = Array.IndexOf(current, member);
            if (index < 0)
            {
                return current.Length;
            }

            var next = new T[current.Length - 1];
            Array.Copy(current, 0, next, 0, index);
            Array.Copy(current, index + 1, next, index, current.Length - index - 1);
            Publish(next);
            return next.Length;
        }
    }

    /// <summary>
    /// The member for one request: the one its affinity key leads to when that one can take it, else the strategy's
    /// choice among those that can; null when none can (<see cref="MemberPicker.Pick"/>).
    /// </summary>
    public T? Pick(IAffinityPolicy affinity, string? affinityKey, T? exclude, long now)
    {
        Members members = Volatile.Read(ref _members);
        return MemberPicker.Pick(members.All, members.WeightedSchedule, ref _cursor, Strategy, affinity, affinityKey, exclude, now);
    }

    /// <summary>The next member in turn other than <paramref name="exclude"/>, whether or not it can take a request; null when none.</summary>
    public T? NextInTurn(T? exclude)
    {
        T[] all = Snapshot;
        uint start = Interlocked.Increment(ref _cursor);
        for (uint offset = 0; offset < (uint)all.Length; offset++)
        {
            T candidate = all[(int)((start + offset) % (uint)all.Length)];
            if (candidate != exclude)
            {
                return candidate;
            }
        }

        return null;
    }

    private void Publish(T[] next) =>
        Volatile.Write(ref _members, new Members(next, Strategy == BalancingStrategy.Weighted ? WeightedSchedule.Build(next) : []));

    private sealed record Members(T[] All, int[] WeightedSchedule);
}
