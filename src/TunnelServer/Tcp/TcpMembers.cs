using System.Net;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// The clients serving one session's TCP port and the choice among them: picked through the balancing library under
/// <see cref="Configuration.TcpServerOptions.Strategy"/>, and passed over (ejected) for a while when their target keeps refusing.
/// </summary>
internal sealed class TcpMembers(TcpSessions owner, string session)
{
    private readonly Lock _sync = new();
    private Snapshot _members = new([], []);
    private uint _cursor;

    /// <summary>The session's TCP clients now.</summary>
    public int Count => Volatile.Read(ref _members).All.Length;

    public void Add(Uplink uplink, int weight)
    {
        lock (_sync)
        {
            Publish([.. _members.All, new TcpMember(uplink, weight)]);
        }
    }

    public void Remove(Uplink uplink)
    {
        lock (_sync)
        {
            Publish(Array.FindAll(_members.All, member => !ReferenceEquals(member.Uplink, uplink)));
        }
    }

    /// <summary>The client for a new caller under the session's strategy, passing over <paramref name="exclude"/>; null when none can take it.</summary>
    public TcpMember? Pick(TcpMember? exclude)
    {
        Snapshot members = Volatile.Read(ref _members);
        return MemberPicker.Pick(members.All, members.WeightedSchedule, ref _cursor, owner.Options.Strategy, NoAffinity.Instance,
            affinityKey: null, exclude, TimeProvider.System.GetTimestamp());
    }

    /// <summary>A client's target refused a caller before anything reached it: logged, and counted towards the client's ejection.</summary>
    public void OnTargetRefused(TcpMember member, IPEndPoint? caller, uint streamId)
    {
        TcpLog.TargetRefused(owner.Logger, session, caller, streamId, member.Uplink.Name);
        owner.Metrics.TargetRefused();
        if (member.OnTargetRefused(TimeProvider.System.GetTimestamp(), TimeProvider.System.TimestampFrequency, owner.Options, out TimeSpan ejectedFor))
        {
            TcpLog.ClientEjected(owner.Logger, session, member.Uplink.Name, (long)ejectedFor.TotalMilliseconds);
            owner.Metrics.ClientEjected();
        }
    }

    private void Publish(TcpMember[] next) =>
        Volatile.Write(ref _members, new Snapshot(next, owner.Options.Strategy == BalancingStrategy.Weighted ? WeightedSchedule.Build(next) : []));

    private sealed record Snapshot(TcpMember[] All, int[] WeightedSchedule);
}
