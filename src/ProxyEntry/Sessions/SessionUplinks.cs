using Tunnel2.Balancing;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>
/// The clients of one session: an immutable array of members swapped on change (with the weighted schedule built for
/// it), the session's balancing policy and the round-robin cursor.
/// </summary>
internal sealed class SessionUplinks(BalancingPolicy policy)
{
    private readonly Dictionary<string, SessionMember> _byInstance = new(StringComparer.Ordinal);
    private Members _members = new([], []);
    private uint _cursor;

    private sealed record Members(SessionMember[] All, int[] WeightedSchedule);

    public BalancingPolicy Policy { get; } = policy;

    public SessionMember[] Snapshot => Volatile.Read(ref _members).All;

    /// <summary>Adds the member; an earlier member of the same client instance is removed and returned (not closed).</summary>
    /// <remarks>Callers serialise Add and Remove.</remarks>
    public SessionMember? Add(SessionMember member)
    {
        SessionMember? replaced = null;
        if (member.InstanceId is { } instanceId)
        {
            if (_byInstance.TryGetValue(instanceId, out SessionMember? previous) && !ReferenceEquals(previous, member))
            {
                Remove(previous.Uplink);
                replaced = previous;
            }

            _byInstance[instanceId] = member;
        }

        SessionMember[] current = _members.All;
        var next = new SessionMember[current.Length + 1];
        current.CopyTo(next, 0);
        next[^1] = member;
        Publish(next);
        return replaced;
    }

    /// <summary>Removes the uplink's member; returns how many remain.</summary>
    /// <remarks>Callers serialise Add and Remove.</remarks>
    public int Remove(Uplink uplink)
    {
        SessionMember[] current = _members.All;
        int index = Array.FindIndex(current, member => ReferenceEquals(member.Uplink, uplink));
        if (index < 0)
        {
            return current.Length;
        }

        if (current[index].InstanceId is { } instanceId && _byInstance.TryGetValue(instanceId, out SessionMember? indexed)
            && ReferenceEquals(indexed, current[index]))
        {
            _byInstance.Remove(instanceId);
        }

        var next = new SessionMember[current.Length - 1];
        Array.Copy(current, 0, next, 0, index);
        Array.Copy(current, index + 1, next, index, current.Length - index - 1);
        Publish(next);
        return next.Length;
    }

    /// <summary>
    /// The member for one request: the one its affinity names when that one can take it, else the strategy's choice among
    /// those that can. When none can, a ready member at its stream limit (the open then reports the limit), or none.
    /// </summary>
    public SessionMember? Pick(in PickContext context, long now, out PickStatus status)
    {
        Members members = Volatile.Read(ref _members);
        SessionMember[] all = members.All;
        if (all.Length == 0)
        {
            status = PickStatus.NoClient;
            return null;
        }

        SessionMember? picked = MemberPicker.Pick(all, members.WeightedSchedule, ref _cursor, Policy.Strategy, Policy.AffinityPolicy,
            context.AffinityKey, context.Exclude, now);
        if (picked is not null)
        {
            status = PickStatus.Picked;
            return picked;
        }

        return Fallback(all, context.Exclude, now, out status);
    }

    private static SessionMember? Fallback(SessionMember[] all, SessionMember? exclude, long now, out PickStatus status)
    {
        bool anyOpen = false;
        foreach (SessionMember member in all)
        {
            if (member == exclude || !member.Uplink.AcceptsNewStreams)
            {
                continue;
            }

            if (member.IsReady(now))
            {
                status = PickStatus.AllFull;
                return member;
            }

            anyOpen = true;
        }

        status = anyOpen ? PickStatus.NoneReady : PickStatus.NoClient;
        return null;
    }

    private void Publish(SessionMember[] next) =>
        Volatile.Write(ref _members, new Members(next, Policy.Strategy == BalancingStrategy.Weighted ? WeightedSchedule.Build(next) : []));
}
