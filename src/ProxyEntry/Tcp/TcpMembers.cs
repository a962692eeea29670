using System.Net;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// The clients serving one session's TCP port and the choice among them: picked through the balancing library under
/// <see cref="Configuration.TcpServerOptions.Strategy"/>, and passed over (ejected) for a while when their target keeps refusing.
/// </summary>
internal sealed class TcpMembers(ITcpPortHost owner, string session)
{
    private readonly MemberSet<TcpMember> _members = new(owner.Options.Strategy);

    /// <summary>The session's TCP clients now.</summary>
    public int Count => _members.Count;

    public void Add(Uplink uplink, int weight) => _members.Add(new TcpMember(uplink, weight));

    public void Remove(Uplink uplink)
    {
        if (Array.Find(_members.Snapshot, member => ReferenceEquals(member.Uplink, uplink)) is { } member)
        {
            _members.Remove(member);
        }
    }

    /// <summary>The client for a new caller under the session's strategy, passing over <paramref name="exclude"/>; null when none can take it.</summary>
    public TcpMember? Pick(TcpMember? exclude) =>
        _members.Pick(NoAffinity.Instance, affinityKey: null, exclude, TimeProvider.System.GetTimestamp());

    /// <summary>A client's target refused a caller before anything reached it: logged, and counted towards the client's ejection.</summary>
    public void OnTargetRefused(TcpMember member, IPEndPoint? caller, uint streamId)
    {
        TcpLog.TargetRefused(owner.Logger, session, caller, streamId, member.Uplink.Name);
        owner.Metrics.TargetRefused();
        if (member.OnTargetRefused(TimeProvider.System.GetTimestamp(), TimeProvider.System.TimestampFrequency, owner.Ejection, out TimeSpan ejectedFor))
        {
            TcpLog.ClientEjected(owner.Logger, session, member.Uplink.Name, (long)ejectedFor.TotalMilliseconds);
            owner.Metrics.ClientEjected();
        }
    }
}
