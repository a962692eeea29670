using System.Globalization;
using System.Net;
using Microsoft.Extensions.Options;
using Tunnel2.Balancing.Health;
using Tunnel2.Protocol.Draining;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.ProxyEntry.Tcp;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Hosting;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// The sessions' public TCP ports: a TCP login reserves its session's port (the same one for every client of the
/// session, chosen by <see cref="TcpPortChooser"/>), and the port closes when its last client leaves. On shutdown the
/// ports stop accepting and the drain waits for their connections. One timer closes connections idle beyond
/// <see cref="TcpServerOptions.IdleTimeout"/>.
/// </summary>
public sealed class TcpSessions : ITcpPortHost, IDisposable
{
    private readonly TcpServerOptions _options;
    private readonly TcpPortChooser _ports;
    private readonly IPAddress _bindAddress;
    private readonly ILogger _logger;
    private readonly int _retryAfterSeconds;
    private readonly Lock _sync = new();
    private readonly Dictionary<string, TcpSessionListener> _listeners = new(StringComparer.Ordinal);
    private readonly Timer _sweep;
    private readonly InFlightCounter _open = new();
    private bool _draining;
    private readonly ServerLoop _loop;
    private readonly bool _ownsLoop;
    private TcpCallerLoop? _callerLoop;
    private bool _callerLoopTried;

    /// <param name="loop">The server's loop, shared with the uplinks; null: one of its own (tests).</param>
    public TcpSessions(IOptions<TunnelServerOptions> options, IOptions<ProxyEntryOptions> proxyOptions,
        TcpMetrics metrics, ILogger<TcpSessions> logger, CredentialsFile? credentials = null, SessionPolicies? policies = null,
        ServerLoop? loop = null)
    {
        _ownsLoop = loop is null;
        _loop = loop ?? new ServerLoop(logger);
        Metrics = metrics;
        Policies = policies ?? new SessionPolicies();
        _options = options.Value.Tcp;
        Ejection = _options.Ejection();
        _bindAddress = IPAddress.Parse(_options.BindAddress);
        _ports = new TcpPortChooser(TcpPortRange.TryParse(_options.PortRange, out TcpPortRange range, out _) ? range : null, _bindAddress, credentials);
        _logger = logger;
        _retryAfterSeconds = proxyOptions.Value.RetryAfterSeconds;

        // A quarter of the timeout between checks: a connection is closed between 1 and 1.25 timeouts after its last byte.
        TimeSpan period = TimeSpan.FromMilliseconds(Math.Clamp(_options.IdleTimeout.TotalMilliseconds / 4, 100, 30_000));
        _sweep = new Timer(static state => ((TcpSessions)state!).CloseIdle(), this, period, period);
    }

    public TcpServerOptions Options => _options;

    /// <summary>When a client whose target keeps refusing is passed over (<see cref="TcpServerOptions.EjectAfter"/>…), built once.</summary>
    public EjectionOptions Ejection { get; }

    public ILogger Logger => _logger;

    public TcpMetrics Metrics { get; }

    public SessionPolicies Policies { get; }

    /// <summary>The callers' event loop (<see cref="TcpServerOptions.Engine"/>), started with the first port; null: the runtime's sockets relay them.</summary>
    public TcpCallerLoop? CallerLoop => Volatile.Read(ref _callerLoop);

    /// <summary>The session's public TCP port now; null when it has none open.</summary>
    public int? PortOf(string session)
    {
        lock (_sync)
        {
            return _listeners.TryGetValue(session, out TcpSessionListener? listener) ? listener.Port : null;
        }
    }

    /// <summary>TCP connections of the session open now.</summary>
    public int OpenConnections(string session)
    {
        lock (_sync)
        {
            return _listeners.TryGetValue(session, out TcpSessionListener? listener) ? listener.OpenConnections : 0;
        }
    }

    /// <summary>TCP connections open now, over every session.</summary>
    public int OpenConnectionsTotal => (int)_open.Count;

    /// <summary>
    /// Shutdown: every port stops accepting, so callers find it closed and a balancer in front sends them to another node;
    /// the connections already open go on until <see cref="WaitIdleAsync"/> says they are done or the drain's deadline.
    /// </summary>
    public void StopAccepting()
    {
        lock (_sync)
        {
            _draining = true;
            foreach (TcpSessionListener listener in _listeners.Values)
            {
                listener.StopAccepting();
            }
        }
    }

    /// <summary>True once no TCP connection is open; false when <paramref name="timeout"/> passed first.</summary>
    public Task<bool> WaitIdleAsync(TimeSpan timeout) => _open.WaitIdleAsync(timeout);

    public void ConnectionOpened() => _open.Increment();

    public void ConnectionClosed() => _open.Decrement();

    /// <summary>A lease on the session's TCP port for a login that asked for TCP, opening the port if it is not open yet.</summary>
    /// <param name="wanted">
    /// The port another node gave the session (<c>Tunnel2-Tcp-Port</c>): inside the range, that port or a refusal while
    /// it is taken, so that callers a balancer sends to any node on that port reach this session and no other.
    /// </param>
    public TcpReservation Reserve(string session, int? wanted = null)
    {
        lock (_sync)
        {
            if (_draining)
            {
                return Refuse(session, 503, "server-draining", "Server draining",
                    "This server is shutting down and opens no TCP port; try another node or again later.",
                    KeyValuePair.Create("Retry-After", _retryAfterSeconds.ToString(CultureInfo.InvariantCulture)));
            }

            if (_listeners.TryGetValue(session, out TcpSessionListener? open))
            {
                open.AddLease();
#pragma warning disable CA2000 // the reservation carries the lease to the uplink, which disposes it when it ends
                return new TcpReservation(new TcpLease(this, open), null);
#pragma warning restore CA2000
            }

            int? fixedPort = _ports.FixedPortOf(session);
            if (fixedPort is null && !_ports.HasRange)
            {
                return Refuse(session, 403, "tcp-off", "No TCP port",
                    $"This server gives session '{session}' no TCP port: its operator sets TunnelServer:Tcp:PortRange, or a TcpPorts entry in the credentials file.");
            }

            int? asked = _ports.Hint(fixedPort, wanted);
            if (_ports.Bind(session, fixedPort, asked, OpenPorts()) is not { } bound)
            {
                return Refuse(session, 503, "tcp-ports-exhausted", "No free TCP port",
                    fixedPort is { } busy ? $"Session '{session}''s TCP port {busy} is in use; try again later."
                    : asked is { } taken ? $"Session '{session}''s TCP port {taken}, which another node gave it (Tunnel2-Tcp-Port), is in use here; try again later."
                    : $"Every port of TunnelServer:Tcp:PortRange ({_options.PortRange}) is taken; try again later.",
                    KeyValuePair.Create("Retry-After", _retryAfterSeconds.ToString(CultureInfo.InvariantCulture)));
            }

            StartCallerLoopOnce();
            var listener = new TcpSessionListener(this, session, bound.Socket, _bindAddress, bound.Port);
            _listeners[session] = listener;
            listener.AddLease();
            TcpPortLog.PortOpened(_logger, session, listener.Port, TcpPublicAddress.For(_bindAddress, listener.Port, null));
            listener.Start();
#pragma warning disable CA2000 // the reservation carries the lease to the uplink, which disposes it when it ends
            return new TcpReservation(new TcpLease(this, listener), null);
#pragma warning restore CA2000
        }
    }

    /// <summary>A lease ended: the port closes when it was the last.</summary>
    internal void Release(TcpSessionListener listener)
    {
        lock (_sync)
        {
            if (listener.RemoveLease() > 0)
            {
                return;
            }

            _listeners.Remove(listener.Session);
        }

        TcpPortLog.PortClosed(_logger, listener.Session, listener.Port);
        listener.Dispose();
    }

    /// <summary>Under the lock, with the first port: a server that gives no TCP port runs no loop thread.</summary>
    private void StartCallerLoopOnce()
    {
        if (!_callerLoopTried)
        {
            _callerLoopTried = true;
            Volatile.Write(ref _callerLoop, TcpCallerLoop.IsChosen(_options) ? _loop.Start() : null);
        }
    }

    public void Dispose()
    {
        _sweep.Dispose();
        List<TcpSessionListener> open;
        lock (_sync)
        {
            open = [.. _listeners.Values];
            _listeners.Clear();
        }

        foreach (TcpSessionListener listener in open)
        {
            listener.Dispose();
        }

        if (_ownsLoop)
        {
            _loop.Dispose();
        }
    }

    private HashSet<int> OpenPorts()
    {
        var open = new HashSet<int>(_listeners.Count);
        foreach (TcpSessionListener listener in _listeners.Values)
        {
            open.Add(listener.Port);
        }

        return open;
    }

    private TcpReservation Refuse(string session, int status, string reason, string title, string detail, params KeyValuePair<string, string>[] headers)
    {
        TcpPortLog.LoginRefused(_logger, session, detail);
        return new TcpReservation(null, new HandshakeRefusal(status, reason, title, detail, headers));
    }

    private void CloseIdle()
    {
        List<TcpSessionListener> open;
        lock (_sync)
        {
            if (_listeners.Count == 0)
            {
                return;
            }

            open = [.. _listeners.Values];
        }

        long now = Environment.TickCount64;
        foreach (TcpSessionListener listener in open)
        {
            listener.CloseIdle(now, (long)_options.IdleTimeout.TotalMilliseconds);
        }
    }
}
