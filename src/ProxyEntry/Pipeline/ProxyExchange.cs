using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.ObjectPool;
using Tunnel2.Protocol.Heads;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Policy;
using Tunnel2.ProxyEntry.Routing;

namespace Tunnel2.ProxyEntry.Pipeline;

/// <summary>
/// One public request on its way through the steps (route, rate limit, access, pick, forward, retry), as YARP's
/// <c>IReverseProxyFeature</c> carries one: what each step found, for the next to read. One object per request in
/// flight, taken from <see cref="ProxyExchangePool"/> by the route step (<see cref="ExchangeEntry"/>), carried as the
/// request's feature, and handed back when the request ends, so the hot path does not allocate it.
/// </summary>
internal sealed class ProxyExchange
{
    public HttpContext Context { get; private set; } = null!;

    /// <summary>The route step's decision, made once as the request came in.</summary>
    public RoutedSession Routed { get; private set; }

    /// <summary>
    /// The session's policy, read once with the route: the snapshot this request meets (its visitor rules, rate limit
    /// and balancing), whatever reload or login happens while it runs.
    /// </summary>
    public SessionPolicy SessionPolicy { get; private set; } = null!;

    public SessionRoute Route => Routed.Route;

    public string Session => Routed.Session;

    /// <summary>The target the backend sees (the session prefix stripped, the path canonical).</summary>
    public string BackendTarget => Routed.BackendTarget;

    /// <summary>The head that crosses the tunnel.</summary>
    public RequestHead Head { get; private set; } = null!;

    /// <summary>An upgrade request: no body (Kestrel refuses one), but its stream stays open for the bytes after a 101.</summary>
    public bool IsUpgrade { get; private set; }

    public bool HasBody { get; private set; }

    public BalancingPolicy Policy { get; set; } = null!;

    /// <summary>The request's affinity key under <see cref="Policy"/>; null when it has none.</summary>
    public string? AffinityKey { get; set; }

    /// <summary>The member the current attempt runs on.</summary>
    public SessionMember? Member { get; set; }

    /// <summary>
    /// The affinity cookie the pick step chose with <see cref="Member"/> (cookie affinity, when the caller's cookie names
    /// another client or none): the forward step sends it with the answer's head. Null when there is none to set.
    /// </summary>
    public string? AffinityCookie { get; set; }

    /// <summary>The member an earlier attempt failed on because its backend failed: not picked again.</summary>
    public SessionMember? FailedMember { get; set; }

    /// <summary>Attempts made before the current one.</summary>
    public int Attempt { get; set; }

    /// <summary>What the current attempt may hand back to the retry policy instead of answering.</summary>
    public RetryPermission Retry { get; set; }

    /// <summary>The session had a client at all: its id earns a metrics label.</summary>
    public bool SessionFound { get; set; }

    /// <summary>The route step: the request, where it goes and its session's policy.</summary>
    public void Enter(HttpContext context, RoutedSession routed, SessionPolicy policy)
    {
        Context = context;
        Routed = routed;
        SessionPolicy = policy;
    }

    /// <summary>Admitted: the head that crosses the tunnel.</summary>
    public void Start(RequestHead head, bool hasBody)
    {
        Head = head;
        IsUpgrade = head.IsUpgrade;
        HasBody = !IsUpgrade && hasBody;
    }

    /// <summary>Forgets the request, so that a pooled exchange keeps nothing of it alive.</summary>
    public void Clear()
    {
        Context = null!;
        Routed = default;
        SessionPolicy = null!;
        Head = null!;
        Policy = null!;
        AffinityKey = AffinityCookie = null;
        Member = FailedMember = null;
        Attempt = 0;
        Retry = default;
        SessionFound = IsUpgrade = HasBody = false;
    }
}

/// <summary>The exchanges of requests in flight, reused: a request takes one as it starts and returns it as it ends.</summary>
internal sealed class ProxyExchangePool
{
    private readonly DefaultObjectPool<ProxyExchange> _pool = new(new Policy(), Environment.ProcessorCount * 64);

    public ProxyExchange Rent() => _pool.Get();

    public void Return(ProxyExchange exchange) => _pool.Return(exchange);

    private sealed class Policy : PooledObjectPolicy<ProxyExchange>
    {
        public override ProxyExchange Create() => new();

        public override bool Return(ProxyExchange exchange)
        {
            exchange.Clear();
            return true;
        }
    }
}
