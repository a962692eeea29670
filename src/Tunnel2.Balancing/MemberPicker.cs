namespace Tunnel2.Balancing;

/// <summary>
/// The strategies, each a walk over a snapshot of the members that returns one that can take a request now
/// (<see cref="IBalancingMember.CanTake"/>), or null. No locks and no allocation: they run once per request. The server
/// picks among the clients of a session with them, a client among its backends.
/// </summary>
public static class MemberPicker
{
    /// <summary>
    /// The member for one request: the one its affinity key leads to when that one can take it, else the strategy's
    /// choice among those that can; null when none can.
    /// </summary>
    /// <param name="weightedSchedule">The members' <see cref="WeightedSchedule"/> (used by the weighted strategy only).</param>
    /// <param name="cursor">The members' shared round-robin position, stepped once per pick.</param>
    /// <param name="affinityKey">The request's key under <paramref name="affinity"/> (<see cref="IAffinityPolicy.KeyOf"/>), or null.</param>
    public static T? Pick<T>(T[] members, int[] weightedSchedule, ref uint cursor, BalancingStrategy strategy, IAffinityPolicy affinity,
        string? affinityKey, T? exclude, long now)
        where T : class, IBalancingMember
    {
        if (members.Length <= 1)
        {
            // The common case, one member: no strategy to run and no shared cursor to step.
            return members.Length == 1 && members[0] != exclude && members[0].CanTake(now) ? members[0] : null;
        }

        T? picked = affinityKey is null ? null : affinity.Find(members, affinityKey, exclude, now);

        // One cursor step per pick, then a walk from there: stepping the shared cursor for every candidate would let
        // concurrent picks skip the one member that still takes requests while the others drain or fail.
        return picked ?? strategy switch
        {
            BalancingStrategy.LeastRequests => LeastRequests(members, Random.Shared, exclude, now),
            BalancingStrategy.Weighted => Weighted(members, weightedSchedule, Interlocked.Increment(ref cursor), exclude, now),
            _ => RoundRobin(members, Interlocked.Increment(ref cursor), exclude, now),
        };
    }

    /// <summary>From member <paramref name="start"/> on, the first that can take the request.</summary>
    public static T? RoundRobin<T>(T[] members, uint start, T? exclude, long now)
        where T : class, IBalancingMember
    {
        uint count = (uint)members.Length;
        for (uint offset = 0; offset < count; offset++)
        {
            T candidate = members[(int)((start + offset) % count)];
            if (candidate != exclude && candidate.CanTake(now))
            {
                return candidate;
            }
        }

        return null;
    }

    /// <summary>
    /// Power of two choices: of two members drawn at random, the one with fewer requests in flight. With two members that is
    /// always the less busy one; with many it avoids the herd that "always the least busy" causes when every pick sees
    /// the same counts.
    /// </summary>
    public static T? LeastRequests<T>(T[] members, Random random, T? exclude, long now)
        where T : class, IBalancingMember
    {
        int count = members.Length;
        int first = random.Next(count);
        T a = members[first];
        if (count == 1)
        {
            return a != exclude && a.CanTake(now) ? a : null;
        }

        int second = random.Next(count - 1);
        T b = members[second >= first ? second + 1 : second];
        bool aFits = a != exclude && a.CanTake(now);
        bool bFits = b != exclude && b.CanTake(now);
        if (aFits && bFits)
        {
            return b.Outstanding < a.Outstanding ? b : a;
        }

        if (aFits || bFits)
        {
            return aFits ? a : b;
        }

        // Both draws unfit (unready, full, the excluded one): the least busy of all that fit, the rare path.
        T? least = null;
        foreach (T candidate in members)
        {
            if (candidate != exclude && candidate.CanTake(now) && (least is null || candidate.Outstanding < least.Outstanding))
            {
                least = candidate;
            }
        }

        return least;
    }

    /// <summary>From position <paramref name="start"/> of the weighted schedule on, the first member that can take the request.</summary>
    public static T? Weighted<T>(T[] members, int[] schedule, uint start, T? exclude, long now)
        where T : class, IBalancingMember
    {
        uint length = (uint)schedule.Length;
        for (uint offset = 0; offset < length; offset++)
        {
            T candidate = members[schedule[(int)((start + offset) % length)]];
            if (candidate != exclude && candidate.CanTake(now))
            {
                return candidate;
            }
        }

        return null;
    }

    /// <summary>The member a cookie names, when it can take the request.</summary>
    public static T? ByAffinityKey<T>(T[] members, string key, T? exclude, long now)
        where T : class, IBalancingMember
    {
        foreach (T candidate in members)
        {
            if (candidate.AffinityKey == key)
            {
                return candidate != exclude && candidate.CanTake(now) ? candidate : null;
            }
        }

        return null;
    }

    /// <summary>
    /// Rendezvous (highest random weight) hashing: every member scores the key, the highest score wins. A key stays
    /// with its member while that member can take requests; when a member comes or goes only the keys it wins or won
    /// move, and the others stay where they were.
    /// </summary>
    public static T? Rendezvous<T>(T[] members, ulong keyHash, T? exclude, long now)
        where T : class, IBalancingMember
    {
        T? best = null;
        ulong bestScore = 0;
        foreach (T candidate in members)
        {
            if (candidate == exclude || !candidate.CanTake(now))
            {
                continue;
            }

            ulong score = Mix(keyHash ^ candidate.KeyHash);
            if (best is null || score > bestScore)
            {
                best = candidate;
                bestScore = score;
            }
        }

        return best;
    }

    /// <summary>The 64-bit finaliser of MurmurHash3: every input bit flips each output bit with probability about one half.</summary>
    private static ulong Mix(ulong value)
    {
        value ^= value >> 33;
        value *= 0xff51afd7ed558ccdUL;
        value ^= value >> 33;
        value *= 0xc4ceb9fe1a85ec53UL;
        value ^= value >> 33;
        return value;
    }
}
