using System.Security.Cryptography;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Balancing.Health;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.ProxyEntry.Balancing;

/// <summary>
/// One uplink serving a session, as balancing sees it: its weight, the key affinity remembers it by, and its passive
/// health (answers in a row that said the backend could not be reached, and the ejection they led to).
/// </summary>
public sealed class SessionMember : IBalancingMember
{
    private static long s_lastId;
    private readonly PassiveEjection _ejection = new();
    private long _requests;
    private long _serverErrors;

    /// <param name="remote">The client's address as the server saw it (admin API), when known.</param>
    /// <param name="transport">How the uplink is carried: <c>upgrade</c> or <c>websocket</c> (admin API).</param>
    public SessionMember(Uplink uplink, string? instanceId, int weight, string? remote = null, string transport = "upgrade")
    {
        Uplink = uplink;
        InstanceId = instanceId;
        Weight = weight;
        Remote = remote;
        Transport = transport;
        Id = Interlocked.Increment(ref s_lastId);
        ConnectedAt = DateTimeOffset.UtcNow;

        // Keyed on the client's instance id where it sent one, so that the key, and with it every caller's affinity,
        // survives the client reconnecting; random otherwise.
        KeyHash = instanceId is null
            ? BitConverter.ToUInt64(RandomNumberGenerator.GetBytes(sizeof(ulong)))
            : AffinityKeys.Hash(instanceId);
        AffinityKey = AffinityKeys.CookieValue(KeyHash);
    }

    /// <summary>This process's number for the member, unique while it runs: how the admin API names one client.</summary>
    public long Id { get; }

    public Uplink Uplink { get; }

    public string? Remote { get; }

    public string Transport { get; }

    public DateTimeOffset ConnectedAt { get; }

    /// <summary>Requests sent to this client.</summary>
    public long Requests => Volatile.Read(ref _requests);

    /// <summary>Of those, answered with a 5xx (by its backend, or by the tunnel on its behalf).</summary>
    public long ServerErrors => Volatile.Read(ref _serverErrors);

    public string? InstanceId { get; }

    public int Weight { get; }

    /// <summary>What an affinity cookie holds: derived from the instance id, which it does not reveal.</summary>
    public string AffinityKey { get; }

    public ulong KeyHash { get; }

    /// <summary>Streams open on the uplink: what least-requests compares.</summary>
    public int Outstanding => Uplink.ActiveStreamCount;

    /// <summary>The client says its backend is ready, and no run of failures has put it aside.</summary>
    public bool IsReady(long now) => Uplink.PeerReady && !_ejection.IsEjected(now);

    /// <summary>May take a new request now: ready, and its uplink open with room for a stream.</summary>
    public bool CanTake(long now) => Uplink.HasRoomForStream && IsReady(now);

    /// <summary>
    /// Counts an answer that said the backend could not be reached. After <see cref="EjectionOptions.EjectAfter"/> in a
    /// row the member is ejected from <paramref name="now"/> (a <see cref="TimeProvider"/> timestamp) for the backoff,
    /// and true is returned with it. Once the backoff ends the member takes requests again; one more failure ejects it
    /// again, for twice as long, up to <see cref="EjectionOptions.MaxBackoff"/>.
    /// </summary>
    public bool OnBackendUnreachable(long now, long timestampFrequency, EjectionOptions options, out TimeSpan backoff) =>
        _ejection.OnUnreachable(now, timestampFrequency, options, out backoff);

    public void CountRequest() => Interlocked.Increment(ref _requests);

    public void CountServerError() => Interlocked.Increment(ref _serverErrors);

    /// <summary>A response head came back: the run of failures, and the backoff it built up, are over.</summary>
    public void OnAnswered() => _ejection.OnAnswered();
}
