using System.Collections.Concurrent;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.ProxyEntry.Sessions;

/// <summary>
/// Session id → the live uplinks serving it. TunnelServer registers uplinks as clients log in and out; ProxyEntry
/// picks one per request. Picking is lock-free; registering takes a lock (it is rare).
/// </summary>
public sealed class SessionRegistry
{
    private readonly ConcurrentDictionary<string, SessionUplinks> _sessions = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, SessionUplinks>.AlternateLookup<ReadOnlySpan<char>> _bySpan;
    private readonly Lock _mutation = new();

    public SessionRegistry()
    {
        _bySpan = _sessions.GetAlternateLookup<ReadOnlySpan<char>>();
    }

    /// <summary>Sessions with at least one uplink.</summary>
    public int SessionCount => _sessions.Count;

    /// <summary>The reason an uplink replaced by a new login of the same client instance is closed with.</summary>
    public const string ReplacedReason = "replaced by a new login";

    /// <summary>
    /// Adds an uplink to its session. When <paramref name="instanceId"/> names a client instance that already has an
    /// uplink in the session, that older uplink is a leftover of a connection the client gave up on (half-open, its
    /// peer gone without a FIN): it is removed and closed at once, so the new login never waits for it to time out.
    /// </summary>
    /// <returns>The uplink that was replaced (already closed), or null.</returns>
    public Uplink? Register(string sessionId, Uplink uplink, string? instanceId = null)
    {
        Uplink? replaced;
        lock (_mutation)
        {
            if (!_sessions.TryGetValue(sessionId, out SessionUplinks? members))
            {
                members = new SessionUplinks();
                _sessions[sessionId] = members;
            }

            replaced = members.Add(uplink, instanceId);
        }

        replaced?.Close(ReplacedReason);
        return replaced;
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
    /// The next uplink of the session that takes new streams (round robin, preferring one below its stream limit), or
    /// null when there is none.
    /// </summary>
    public Uplink? Pick(ReadOnlySpan<char> sessionId) =>
        _bySpan.TryGetValue(sessionId, out SessionUplinks? members) ? members.Pick() : null;

    /// <summary>The uplinks now registered for a session (a snapshot).</summary>
    public IReadOnlyList<Uplink> GetUplinks(string sessionId) =>
        _sessions.TryGetValue(sessionId, out SessionUplinks? members) ? members.Snapshot : [];

    /// <summary>Every registered uplink (a snapshot), e.g. to close them all on shutdown.</summary>
    public List<Uplink> GetAllUplinks()
    {
        var all = new List<Uplink>();
        foreach (KeyValuePair<string, SessionUplinks> entry in _sessions)
        {
            all.AddRange(entry.Value.Snapshot);
        }

        return all;
    }
}
