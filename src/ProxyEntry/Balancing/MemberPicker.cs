namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>
/// The strategies, each a walk over a snapshot of a session's members that returns one that can take a request now
/// (<see cref="SessionMember.CanTake"/>), or null. No locks and no allocation: they run once per request.
/// </summary>
public static class MemberPicker
{
    /// <summary>From member <paramref name="start"/> on, the first that can take the request.</summary>
    public static SessionMember? RoundRobin(SessionMember[] members, uint start, SessionMember? exclude, long now)
    {
        uint count = (uint)members.Length;
        for (uint offset = 0; offset < count; offset++)
        {
            SessionMember candidate = members[(int)((start + offset) % count)];
            if (candidate != exclude && candidate.CanTake(now))
            {
                return candidate;
            }
        }

        return null;
    }

    /// <summary>
    /// Power of two choices: of two members drawn at random, the one with fewer streams open. With two members that is
    /// always the less busy one; with many it avoids the herd that "always the least busy" causes when every pick sees
    /// the same counts.
    /// </summary>
    public static SessionMember? LeastRequests(SessionMember[] members, Random random, SessionMember? exclude, long now)
    {
        int count = members.Length;
        int first = random.Next(count);
        SessionMember a = members[first];
        if (count == 1)
        {
            return a != exclude && a.CanTake(now) ? a : null;
        }

        int second = random.Next(count - 1);
        SessionMember b = members[second >= first ? second + 1 : second];
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
        SessionMember? least = null;
        foreach (SessionMember candidate in members)
        {
            if (candidate != exclude && candidate.CanTake(now) && (least is null || candidate.Outstanding < least.Outstanding))
            {
                least = candidate;
            }
        }

        return least;
    }

    /// <summary>From position <paramref name="start"/> of the weighted schedule on, the first member that can take the request.</summary>
    public static SessionMember? Weighted(SessionMember[] members, int[] schedule, uint start, SessionMember? exclude, long now)
    {
        uint length = (uint)schedule.Length;
        for (uint offset = 0; offset < length; offset++)
        {
            SessionMember candidate = members[schedule[(int)((start + offset) % length)]];
            if (candidate != exclude && candidate.CanTake(now))
            {
                return candidate;
            }
        }

        return null;
    }

    /// <summary>The member a cookie names, when it can take the request.</summary>
    public static SessionMember? ByAffinityKey(SessionMember[] members, string key, SessionMember? exclude, long now)
    {
        foreach (SessionMember candidate in members)
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
    public static SessionMember? Rendezvous(SessionMember[] members, ulong keyHash, SessionMember? exclude, long now)
    {
        SessionMember? best = null;
        ulong bestScore = 0;
        foreach (SessionMember candidate in members)
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
