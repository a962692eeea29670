using System.Security.Cryptography;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Balancing.Health;
using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// One client of a session's TCP port, as the shared strategies see it: its uplink, its weight, the TCP connections it
/// has open (what least-requests compares) and its passive health (targets that refused in a row, and the ejection they
/// led to). Apart from the HTTP side's member of the same uplink: a client's TCP target and HTTP backend fail apart.
/// </summary>
internal sealed class TcpMember : IBalancingMember
{
    private readonly PassiveEjection _ejection = new();
    private int _open;

    public TcpMember(Uplink uplink, int weight)
    {
        Uplink = uplink;
        Weight = Math.Max(1, weight);
        KeyHash = BitConverter.ToUInt64(RandomNumberGenerator.GetBytes(sizeof(ulong)));
        AffinityKey = AffinityKeys.CookieValue(KeyHash);
    }

    public Uplink Uplink { get; }

    public int Weight { get; }

    /// <summary>TCP connections open on this client now, counted from the stream's opening.</summary>
    public int Outstanding => Volatile.Read(ref _open);

    public ulong KeyHash { get; }

    public string AffinityKey { get; }

    /// <summary>Ready (its health probe passes), not ejected, its uplink open with room for a stream.</summary>
    public bool CanTake(long now) => Uplink.PeerReady && Uplink.HasRoomForStream && !_ejection.IsEjected(now);

    public bool IsEjected(long now) => _ejection.IsEjected(now);

    public void Opened() => Interlocked.Increment(ref _open);

    public void Closed() => Interlocked.Decrement(ref _open);

    /// <summary>Its target refused a connection: counted towards its ejection; true when this one ejects it, with how long for.</summary>
    public bool OnTargetRefused(long now, long timestampFrequency, EjectionOptions options, out TimeSpan ejectedFor) =>
        _ejection.OnUnreachable(now, timestampFrequency, options, out ejectedFor);

    /// <summary>Its target took a connection: the run of refusals, and the backoff it built up, are over.</summary>
    public void OnTargetConnected() => _ejection.OnAnswered();
}
