using Microsoft.Extensions.Options;
using Tunnel2.Balancing;
using Tunnel2.Balancing.Affinity;
using Tunnel2.Balancing.Health;
using Tunnel2.Protocol.Heads;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Diagnostics;
using Tunnel2.TunnelClient.Relay.Http1;
using Tunnel2.TunnelClient.Relay.Shaping;
using Tunnel2.TunnelClient.EventLoops;
using Tunnel2.TunnelClient.Relay.OnLoop;

namespace Tunnel2.TunnelClient.Backends;

/// <summary>
/// The backends behind this client (<c>--backend</c>, one or several) and how a request picks one, with the balancing
/// library the server uses for its clients: the strategies (<see cref="MemberPicker"/>), an affinity policy
/// (<see cref="IAffinityPolicy"/>, reading the head as <see cref="HeadAffinityRequest"/>), a backend whose probe fails
/// passed over, and passive ejection after <see cref="Ejection"/>'s failures in a row (a refused connect, or a failure
/// before the answer). With one backend there is nothing to pick: every request goes to it.
/// </summary>
public sealed class BackendSet : IAsyncDisposable
{
    /// <summary>When a backend is passed over: the server's defaults for its clients (3 in a row, 1 s, up to 30 s).</summary>
    public static readonly EjectionOptions Ejection = EjectionOptions.Default;

    private readonly Backend[] _all;
    private readonly MemberSet<Backend> _members;
    private readonly IAffinityPolicy _affinity;
    private readonly TimeProvider _clock;
    private readonly TunnelClientMetrics _metrics;
    private readonly ILogger<BackendSet> _logger;

    /// <param name="loop">The client's event loop, which holds new backend connections when <see cref="BackendLoop"/> picks it.</param>
    public BackendSet(IOptions<TunnelClientOptions> options, TunnelClientMetrics metrics, ILogger<BackendSet> logger, TimeProvider? clock = null, ClientLoop? loop = null)
    {
        TunnelClientOptions settings = options.Value;
        List<BackendAddress> addresses = BackendAddress.ParseList(settings.Backends.Urls, out string? error)
                                         ?? throw new OptionsValidationException(nameof(TunnelClientOptions), typeof(TunnelClientOptions), [$"TunnelClient:Backends:Urls: {error}"]);
        _metrics = metrics;
        _logger = logger;
        _clock = clock ?? TimeProvider.System;
        _all = new Backend[addresses.Count];
        for (int i = 0; i < _all.Length; i++)
        {
#pragma warning disable CA2000 // each pool is owned by its Backend, which the set disposes
            var pool = new BackendConnectionPool(addresses[i].Url, settings.ConnectTimeout, settings.Backends.PooledConnectionIdleTimeout,
                maxIdle: settings.Limits.MaxConcurrency, settings.Uplink.UnsentBytesLimit, OnConnectionClosed);
#pragma warning restore CA2000
            _all[i] = new Backend(i, addresses[i], pool, settings.Backends.RewritePaths && settings.Backends.PathPrefix == PathPrefixMode.Strip);
        }

        if (BackendLoop.Choose(settings, loop, logger) is { } onLoop)
        {
            foreach (Backend backend in _all)
            {
                backend.Pool.UseLoop(onLoop);
            }

            UsesLoop = Array.TrueForAll(_all, backend => backend.Pool.UsesLoop); // TLS backends keep the runtime's sockets
        }

        HostHeader = HostHeaderPolicy.Parse(settings.Backends.HostHeader, out string? hostHeaderError)
                     ?? throw new OptionsValidationException(nameof(TunnelClientOptions), typeof(TunnelClientOptions), [$"TunnelClient:Backends:HostHeader: {hostHeaderError}"]);
        KeepsPathPrefix = settings.Backends.PathPrefix == PathPrefixMode.Keep;

        _affinity = AffinityPolicy.For(_all.Length > 1 ? settings.Backends.Affinity : AffinityMode.None, settings.Backends.AffinityHeader,
            settings.Backends.AffinityCookie);
        _members = new MemberSet<Backend>(settings.Backends.Strategy, _all);
    }

    public IReadOnlyList<Backend> All => _all;

    /// <summary>New connections to the backends are made on the client's event loop (<see cref="BackendLoop"/>).</summary>
    public bool UsesLoop { get; }

    /// <summary>Which Host every backend is sent: by the relay, the health probe and the inspector's replay alike.</summary>
    public HostHeaderPolicy HostHeader { get; }

    /// <summary>Path mode sends the backend <c>/session/{id}/…</c> as the caller did (<see cref="PathPrefixMode.Keep"/>).</summary>
    public bool KeepsPathPrefix { get; }

    /// <summary>Cookie affinity is on: a response from a backend other than the one the caller's cookie names sets it.</summary>
    public bool UsesAffinityCookie => _affinity.Mode == AffinityMode.Cookie;

    /// <summary>Some backend passes its probe: what the client reports to the server.</summary>
    public bool AnyProbedReady
    {
        get
        {
            foreach (Backend backend in _all)
            {
                if (backend.IsProbedReady)
                {
                    return true;
                }
            }

            return false;
        }
    }

    /// <summary>
    /// The backend for one request, other than <paramref name="exclude"/> (the one a retried connect failed on). When no
    /// backend passes its probe or all are ejected, the next in turn anyway: the server has been told this client is
    /// unready (or ejected it itself), and a connect that fails costs less than refusing what still came. Null only
    /// when <paramref name="exclude"/> is the one backend.
    /// </summary>
    /// <param name="affinityKey">The request's <see cref="AffinityKeyOf"/>, read once per request.</param>
    public Backend? Pick(string? affinityKey, Backend? exclude = null)
    {
        if (_all.Length == 1)
        {
            return _all[0] == exclude ? null : _all[0];
        }

        return _members.Pick(_affinity, affinityKey, exclude, _clock.GetTimestamp()) ?? _members.NextInTurn(exclude);
    }

    /// <summary>
    /// The backend to try after <paramref name="failed"/>, one this request has not tried yet (<paramref name="tried"/>,
    /// a bit per <see cref="Backend.Index"/>, gains the failed one): the strategy's choice when that is untried, else
    /// the first untried one that can take requests, else any untried one; null once every backend has been tried.
    /// Each backend is tried at most once per request, as nginx's <c>proxy_next_upstream</c> does.
    /// </summary>
    public Backend? PickUntried(string? affinityKey, Backend failed, ref ulong tried)
    {
        tried |= 1UL << failed.Index;
        if (Pick(affinityKey, exclude: failed) is { } next && (tried & (1UL << next.Index)) == 0)
        {
            return next;
        }

        long now = _clock.GetTimestamp();
        Backend? untried = null;
        foreach (Backend backend in _all)
        {
            if ((tried & (1UL << backend.Index)) == 0)
            {
                if (backend.CanTake(now))
                {
                    return backend;
                }

                untried ??= backend;
            }
        }

        return untried;
    }

    /// <summary>
    /// Cookie affinity: when the request's cookie names another backend than the one that answered (or none), adds the
    /// cookie naming this one, for the whole origin (in path mode the path rewriting moves it under the session's prefix).
    /// </summary>
    public void SetAffinityCookie(List<HeaderField> response, RequestHead request, string? affinityKey, Backend backend)
    {
        if (_affinity.CookieFor(new HeadAffinityRequest(request), affinityKey, backend) is { } cookie)
        {
            response.Add(new HeaderField("Set-Cookie", cookie));
        }
    }

    /// <summary><paramref name="backend"/> refused a connect or failed before answering: counts toward its ejection (logged and counted when it happens).</summary>
    public void ReportUnreachable(Backend backend)
    {
        if (_all.Length > 1
            && backend.Ejection.OnUnreachable(_clock.GetTimestamp(), _clock.TimestampFrequency, Ejection, out TimeSpan backoff))
        {
            TunnelClientLog.BackendEjected(_logger, backend.ToString(), Ejection.EjectAfter, (long)backoff.TotalMilliseconds);
            _metrics.BackendEjected(backend.ToString());
        }
    }

    public async ValueTask DisposeAsync()
    {
        foreach (Backend backend in _all)
        {
            await backend.DisposeAsync();
        }
    }

    /// <summary>What affinity keeps the request by: its cookie's value, its header's, or the caller's address; null without affinity.</summary>
    public string? AffinityKeyOf(RequestHead request) => _affinity.KeyOf(new HeadAffinityRequest(request));

    private void OnConnectionClosed(CloseCause cause, uint streamId)
    {
        _metrics.BackendConnectionClosed(cause.Name);
        if (cause.Suspicious)
        {
            TunnelClientLog.BackendBrokeFraming(_logger, streamId, cause.Name);
        }
        else
        {
            TunnelClientLog.BackendConnectionClosed(_logger, streamId, cause.Name);
        }
    }
}
