using System.Collections.Concurrent;
using Microsoft.Extensions.Options;
using Tunnel2.Balancing.Health;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Policy;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>
/// Session id → the live uplinks serving it. TunnelServer registers uplinks as clients log in and out; ProxyEntry
/// picks one per request with the session's balancing policy. Picking is lock-free; registering takes a lock (it is rare).
/// </summary>
public sealed class SessionRegistry
{
    private readonly ConcurrentDictionary<string, SessionUplinks> _sessions = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, SessionUplinks>.AlternateLookup<ReadOnlySpan<char>> _bySpan;
    private readonly Lock _mutation = new();
    private readonly EjectionOptions _ejection;
    private readonly TimeProvider _clock;

    public SessionRegistry()
        : this(new BalancingOptions(), TimeProvider.System)
    {
    }

    public SessionRegistry(IOptions<ProxyEntryOptions> options, SessionPolicies policies)
        : this(options.Value.Balancing, TimeProvider.System, policies)
    {
    }

    /// <param name="policies">Every session's policy; by default, <paramref name="balancing"/>'s defaults for all.</param>
    public SessionRegistry(BalancingOptions balancing, TimeProvider clock, SessionPolicies? policies = null)
    {
        _bySpan = _sessions.GetAlternateLookup<ReadOnlySpan<char>>();
        _ejection = balancing.Ejection();
        _clock = clock;
        Policies = policies ?? new SessionPolicies(balancing, new SessionDefaultsOptions(), new Dictionary<string, SessionOptions>());
    }

    /// <summary>Every session's <see cref="SessionPolicy"/>, resolved once at start: where the doors look a session's settings up.</summary>
    public SessionPolicies Policies { get; }

    /// <summary>Sessions with at least one uplink.</summary>
    public int SessionCount => _sessions.Count;

    /// <summary>The reason an uplink replaced by a new login of the same client instance is closed with.</summary>
    public const string ReplacedReason = "replaced by a new login";

    /// <summary>The balancing policy of a session, whether or not a client serves it now.</summary>
    public BalancingPolicy PolicyFor(string sessionId) => Policies.For(sessionId).Balancing;

    /// <summary>
    /// A member's answer said its backend could not be reached: counted towards its passive ejection
    /// (<see cref="BalancingOptions.EjectAfter"/>). True when this answer ejected it, for <paramref name="backoff"/>.
    /// </summary>
    public bool ReportUnreachable(SessionMember member, out TimeSpan backoff) =>
        member.OnBackendUnreachable(_clock.GetTimestamp(), _clock.TimestampFrequency, _ejection, out backoff);

    /// <summary>
    /// Adds an uplink to its session. When <paramref name="instanceId"/> names a client instance that already has an
    /// uplink in the session, that older uplink is a leftover of a connection the client gave up on (half-open, its
    /// peer gone without a FIN): it is removed and closed at once, so the new login never waits for it to time out.
    /// </summary>
    /// <param name="weight">The client's declared weight, for the weighted strategy.</param>
    /// <returns>The uplink that was replaced (already closed), or null.</returns>
    /// <param name="remote">The client's address, and <paramref name="transport"/> how its uplink is carried (admin API).</param>
    public Uplink? Register(string sessionId, Uplink uplink, string? instanceId = null, int weight = 1, string? remote = null, string transport = "upgrade")
    {
        SessionMember? replaced;
        lock (_mutation)
        {
            if (!_sessions.TryGetValue(sessionId, out SessionUplinks? members))
            {
                members = new SessionUplinks(PolicyFor(sessionId));
                _sessions[sessionId] = members;
            }

            replaced = members.Add(new SessionMember(uplink, instanceId, weight, remote, transport));
        }

        replaced?.Uplink.Close(ReplacedReason);
        return replaced?.Uplink;
    }

    public void Unregister(string sessionId, Uplink uplink)
    {
        lock (_mutation)
        {
            if (_sessions.TryGetValue(sessionId, out SessionUplinks? members) && members.Remove(uplink) == 0)
            {
                _sessions.TryRemove(sessionId, out _);
            }
        }
    }

    /// <summary>
    /// The member of the session that takes this request, by the session's affinity and strategy; null with a status
    /// that says why when there is none.
    /// </summary>
    public SessionMember? Pick(ReadOnlySpan<char> sessionId, in PickContext context, out PickStatus status)
    {
        if (_bySpan.TryGetValue(sessionId, out SessionUplinks? members))
        {
            return members.Pick(context, _clock.GetTimestamp(), out status);
        }

        status = PickStatus.NoClient;
        return null;
    }

    /// <summary>The uplink the session's strategy picks for a request without affinity; null when there is none.</summary>
    public Uplink? Pick(ReadOnlySpan<char> sessionId) => Pick(sessionId, PickContext.None, out _)?.Uplink;

    /// <summary>The uplinks now registered for a session (a snapshot).</summary>
    public IReadOnlyList<Uplink> GetUplinks(string sessionId) =>
        _sessions.TryGetValue(sessionId, out SessionUplinks? members) ? Array.ConvertAll(members.Snapshot, member => member.Uplink) : [];

    /// <summary>The members now registered for a session (a snapshot).</summary>
    public IReadOnlyList<SessionMember> GetMembers(string sessionId) =>
        _sessions.TryGetValue(sessionId, out SessionUplinks? members) ? members.Snapshot : [];

    /// <summary>The ids of the sessions that have a client now (a snapshot, unordered).</summary>
    public List<string> GetSessionIds() => [.. _sessions.Keys];

    /// <summary>Every registered uplink (a snapshot), e.g. to close them all on shutdown.</summary>
    public List<Uplink> GetAllUplinks()
    {
        var all = new List<Uplink>();
        foreach (KeyValuePair<string, SessionUplinks> entry in _sessions)
        {
            foreach (SessionMember member in entry.Value.Snapshot)
            {
                all.Add(member.Uplink);
            }
        }

        return all;
    }
}
