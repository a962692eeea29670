using Tunnel2.Balancing;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>
/// The clients of one session: their <see cref="MemberSet{T}"/> (snapshot, weighted schedule, cursor) under the session's
/// balancing policy, and which member each client instance has, so that a new login of the same instance replaces its
/// leftover.
/// </summary>
internal sealed class SessionUplinks(BalancingPolicy policy)
{
    private readonly Dictionary<string, SessionMember> _byInstance = new(StringComparer.Ordinal);
    private readonly MemberSet<SessionMember> _members = new(policy.Strategy);

    public BalancingPolicy Policy { get; } = policy;

    public SessionMember[] Snapshot => _members.Snapshot;

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

        _members.Add(member);
        return replaced;
    }

    /// <summary>Removes the uplink's member; returns how many remain.</summary>
    /// <remarks>Callers serialise Add and Remove.</remarks>
    public int Remove(Uplink uplink)
    {
        SessionMember? member = Array.Find(_members.Snapshot, member => ReferenceEquals(member.Uplink, uplink));
        if (member is null)
        {
            return _members.Count;
        }

        if (member.InstanceId is { } instanceId && _byInstance.TryGetValue(instanceId, out SessionMember? indexed)
            && ReferenceEquals(indexed, member))
        {
            _byInstance.Remove(instanceId);
        }

        return _members.Remove(member);
    }

    /// <summary>
    /// The member for one request: the one its affinity names when that one can take it, else the strategy's choice among
    /// those that can. When none can, a ready member at its stream limit (the open then reports the limit), or none.
    /// </summary>
    public SessionMember? Pick(in PickContext context, long now, out PickStatus status)
    {
        SessionMember[] all = _members.Snapshot;
        if (all.Length == 0)
        {
            status = PickStatus.NoClient;
            return null;
        }

        SessionMember? picked = _members.Pick(Policy.AffinityPolicy, context.AffinityKey, context.Exclude, now);
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
}
