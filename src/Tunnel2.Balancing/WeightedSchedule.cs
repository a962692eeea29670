namespace Tunnel2.Balancing;

/// <summary>
/// The order in which weighted round robin visits members, built once per change of membership: each member appears
/// as often as its weight, spread out as nginx's smooth weighted round robin spreads it (weights 5, 1, 1 give
/// a a b a c a a, not a a a a a b c), so picking is one counter step, with no lock.
/// </summary>
public static class WeightedSchedule
{
    public static int[] Build<T>(T[] members)
        where T : IBalancingMember
    {
        int total = 0;
        foreach (T member in members)
        {
            total += member.Weight;
        }

        var schedule = new int[total];
        var current = new int[members.Length];
        for (int slot = 0; slot < total; slot++)
        {
            int best = 0;
            for (int i = 0; i < members.Length; i++)
            {
                current[i] += members[i].Weight;
                if (current[i] > current[best])
                {
                    best = i;
                }
            }

            current[best] -= total;
            schedule[slot] = best;
        }

        return schedule;
    }
}
