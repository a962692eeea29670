using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Balancing.Health;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Rewriting;

namespace Tunnel2.TunnelClient.Backends;

/// <summary>
/// One backend behind the client, as the relay and balancing see it: its address, its pool of keep-alive connections,
/// its path rewriting, its health as the last probe found it, its passive ejection, and the exchanges it has in flight.
/// </summary>
public sealed class Backend : IBalancingMember, IAsyncDisposable
{
    private readonly PassiveEjection _ejection = new();
    private volatile bool _probedReady = true;
    private readonly Func<bool> _isCrowded;
    private int _outstanding;

    internal Backend(int index, BackendAddress address, BackendConnectionPool pool, bool rewritePaths)
    {
        Index = index;
        Url = address.Url;
        Weight = address.Weight;
        Host = address.Url.Authority;
        Pool = pool;
        PathRewriter = rewritePaths ? new PublicPathRewriter(address.Url) : null;
        KeyHash = AffinityKeys.Hash(address.Url.GetLeftPart(UriPartial.Authority));
        AffinityKey = AffinityKeys.CookieValue(KeyHash);
        _isCrowded = () => IsCrowded;
    }

    /// <summary>
    /// Up to this many exchanges in flight, a read waiting for a response head may hold its 16 KiB buffer (4 MiB in
    /// all), which saves a receive call per exchange; beyond it, memory matters more than that call.
    /// </summary>
    internal const int CrowdedAbove = 256;

    /// <summary>Its place in the client's list (below <see cref="BackendAddress.MaxBackends"/>): its bit in a request's set of tried backends.</summary>
    public int Index { get; }

    public Uri Url { get; }

    public int Weight { get; }

    /// <summary>The backend's own authority: its <c>Host</c> under <c>--host-header rewrite</c> (or with no caller's Host), and its TLS server name.</summary>
    public string Host { get; }

    internal BackendConnectionPool Pool { get; }

    public PublicPathRewriter? PathRewriter { get; }

    /// <summary>Derived from the backend's origin, so a caller's affinity cookie survives the client restarting.</summary>
    public ulong KeyHash { get; }

    public string AffinityKey { get; }

    /// <summary>Exchanges running on this backend now, response bodies included.</summary>
    public int Outstanding => Volatile.Read(ref _outstanding);

    /// <summary>More exchanges in flight than <see cref="CrowdedAbove"/>: reads wait for the backend's bytes before they take a buffer.</summary>
    internal bool IsCrowded => Outstanding > CrowdedAbove;

    /// <summary>Passes its health probe (always, without a health path).</summary>
    public bool IsProbedReady => _probedReady;

    public bool CanTake(long now) => _probedReady && !_ejection.IsEjected(now);

    internal PassiveEjection Ejection => _ejection;

    /// <returns>True when the state changed.</returns>
    internal bool ReportProbe(bool ready)
    {
        bool changed = _probedReady != ready;
        _probedReady = ready;
        return changed;
    }

    /// <summary>A response head came back: a run of failed connects is over.</summary>
    internal void OnAnswered() => _ejection.OnAnswered();

    internal void ExchangeStarted() => Interlocked.Increment(ref _outstanding);

    internal void ExchangeEnded() => Interlocked.Decrement(ref _outstanding);

    /// <summary>A new connection from the pool, whose reads follow this backend's <see cref="IsCrowded"/>.</summary>
    /// <param name="mayUseLoop">False for an upgrade request (see <see cref="BackendConnectionPool.ConnectAsync"/>).</param>
    internal Task<BackendConnection> ConnectAsync(bool mayUseLoop, CancellationToken cancellationToken) => Pool.ConnectAsync(_isCrowded, mayUseLoop, cancellationToken);

    public ValueTask DisposeAsync() => Pool.DisposeAsync();

    public override string ToString() => Url.GetLeftPart(UriPartial.Authority);
}
