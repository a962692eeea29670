using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// The sessions' public TCP ports: a TCP login reserves its session's port (the same one for every client of the
/// session; a fixed one from the credentials file's <c>TcpPorts</c>, else the one another node of the cluster gave it
/// when the client names that, else the one it had last if still free, else a free one of
/// <c>TunnelServer:Tcp:PortRange</c>, searched from a place that depends on the session's id only), and the port closes
/// when its last client leaves. One timer closes connections idle beyond <see cref="TcpServerOptions.IdleTimeout"/>.
/// </summary>
public sealed class TcpSessions : IDisposable
{
    private readonly TcpServerOptions _options;
    private readonly TcpPortRange? _range;
    private readonly IPAddress _bindAddress;
    private readonly CredentialsFile? _credentials;
    private readonly VisitorAccess _visitors;
    private readonly ILogger _logger;
    private readonly int _retryAfterSeconds;
    private readonly Lock _sync = new();
    private readonly Dictionary<string, TcpSessionListener> _listeners = new(StringComparer.Ordinal);
    private readonly Dictionary<string, int> _lastPorts = new(StringComparer.Ordinal);
    private readonly Timer _sweep;
    private int _open;
    private bool _draining;
    private TaskCompletionSource? _idle;

    public TcpSessions(IOptions<TunnelServerOptions> options, IOptions<ProxyEntryOptions> proxyOptions, VisitorAccess visitors,
        TcpMetrics metrics, ILogger<TcpSessions> logger, CredentialsFile? credentials = null)
    {
        Metrics = metrics;
        _options = options.Value.Tcp;
        _range = TcpPortRange.TryParse(_options.PortRange, out TcpPortRange range, out _) ? range : null;
        _bindAddress = IPAddress.Parse(_options.BindAddress);
        _credentials = credentials;
        _visitors = visitors;
        _logger = logger;
        _retryAfterSeconds = proxyOptions.Value.RetryAfterSeconds;

        // A quarter of the timeout between checks: a connection is closed between 1 and 1.25 timeouts after its last byte.
        TimeSpan period = TimeSpan.FromMilliseconds(Math.Clamp(_options.IdleTimeout.TotalMilliseconds / 4, 100, 30_000));
        _sweep = new Timer(static state => ((TcpSessions)state!).CloseIdle(), this, period, period);
    }

    internal TcpServerOptions Options => _options;

    internal VisitorAccess Visitors => _visitors;

    internal ILogger Logger => _logger;

    internal TcpMetrics Metrics { get; }

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
    public int OpenConnectionsTotal => Volatile.Read(ref _open);

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
    public async Task<bool> WaitIdleAsync(TimeSpan timeout)
    {
        var idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref _idle, idle);
        if (Volatile.Read(ref _open) == 0)
        {
            return true;
        }

        Task first = await Task.WhenAny(idle.Task, Task.Delay(timeout));
        return first == idle.Task;
    }

    internal void ConnectionOpened() => Interlocked.Increment(ref _open);

    internal void ConnectionClosed()
    {
        if (Interlocked.Decrement(ref _open) == 0)
        {
            Volatile.Read(ref _idle)?.TrySetResult();
        }
    }

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
                return new TcpReservation(new TcpLease(this, open), null);
            }

            int? fixedPort = _credentials?.Current.TcpPorts.TryGetValue(session, out int port) == true ? port : null;
            if (fixedPort is null && _range is null)
            {
                return Refuse(session, 403, "tcp-off", "No TCP port",
                    $"This server gives session '{session}' no TCP port: its operator sets TunnelServer:Tcp:PortRange, or a TcpPorts entry in the credentials file.");
            }

            int? asked = fixedPort is null && wanted is { } hint && _range!.Value.Contains(hint) ? hint : null;
            TcpSessionListener? listener = fixedPort is { } own ? TryListen(session, own)
                : asked is { } hinted ? ListenOn(session, hinted)
                : ListenInRange(session);
            if (listener is null)
            {
                return Refuse(session, 503, "tcp-ports-exhausted", "No free TCP port",
                    fixedPort is { } busy ? $"Session '{session}''s TCP port {busy} is in use; try again later."
                    : asked is { } taken ? $"Session '{session}''s TCP port {taken}, which another node gave it (Tunnel2-Tcp-Port), is in use here; try again later."
                    : $"Every port of TunnelServer:Tcp:PortRange ({_options.PortRange}) is taken; try again later.",
                    KeyValuePair.Create("Retry-After", _retryAfterSeconds.ToString(CultureInfo.InvariantCulture)));
            }

            _listeners[session] = listener;
            _lastPorts[session] = listener.Port;
            listener.AddLease();
            TcpLog.PortOpened(_logger, session, listener.Port, TcpPublicAddress.For(_bindAddress, listener.Port, null));
            listener.Start();
            return new TcpReservation(new TcpLease(this, listener), null);
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

        TcpLog.PortClosed(_logger, listener.Session, listener.Port);
        listener.Dispose();
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
    }

    private TcpSessionListener? ListenInRange(string session)
    {
        TcpPortRange range = _range!.Value;
        if (_lastPorts.TryGetValue(session, out int last) && range.Contains(last) && !IsFixedForAnother(session, last)
            && TryListen(session, last) is { } again)
        {
            return again;
        }

        int start = StartInRange(session, range.Count);
        for (int i = 0; i < range.Count; i++)
        {
            int port = range.First + ((start + i) % range.Count);
            if (IsTaken(port) || IsFixedForAnother(session, port) || IsRememberedByAnother(session, port))
            {
                continue;
            }

            if (TryListen(session, port) is { } listener)
            {
                return listener;
            }
        }

        return null;
    }

    /// <summary>The port another node gave the session, when no other session here holds or owns it.</summary>
    private TcpSessionListener? ListenOn(string session, int port) =>
        IsTaken(port) || IsFixedForAnother(session, port) ? null : TryListen(session, port);

    /// <summary>
    /// Where the search for a session's port starts: a hash of its id (FNV-1a, the same in every process, unlike
    /// string.GetHashCode), so that nodes of a cluster that share nothing, with the same range, give a session the same
    /// port whenever the same ports are free on them, even for logins that reach them at once.
    /// </summary>
    internal static int StartInRange(string session, int count)
    {
        uint hash = 2166136261;
        foreach (char c in session)
        {
            hash = (hash ^ c) * 16777619;
        }

        return (int)(hash % (uint)count);
    }

    private bool IsTaken(int port)
    {
        foreach (TcpSessionListener listener in _listeners.Values)
        {
            if (listener.Port == port)
            {
                return true;
            }
        }

        return false;
    }

    private bool IsFixedForAnother(string session, int port)
    {
        foreach (KeyValuePair<string, int> entry in _credentials?.Current.TcpPorts ?? new Dictionary<string, int>())
        {
            if (entry.Value == port && entry.Key != session)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>A port another session had last is left to it while others are free, so a reconnecting client keeps its port.</summary>
    private bool IsRememberedByAnother(string session, int port)
    {
        if (_lastPorts.Count >= _range!.Value.Count)
        {
            return false; // every port remembered by someone: the oldest memories give way
        }

        foreach (KeyValuePair<string, int> entry in _lastPorts)
        {
            if (entry.Value == port && entry.Key != session)
            {
                return true;
            }
        }

        return false;
    }

    private TcpSessionListener? TryListen(string session, int port)
    {
        var socket = new Socket(_bindAddress.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (_bindAddress.Equals(IPAddress.IPv6Any))
            {
                socket.DualMode = true; // "::" takes IPv4 callers too, as Kestrel's listeners do
            }

            socket.Bind(new IPEndPoint(_bindAddress, port));
            socket.Listen(512);
            return new TcpSessionListener(this, session, socket, _bindAddress, port);
        }
        catch (SocketException)
        {
            socket.Dispose();
            return null; // taken by someone else on this machine: the next port, or a refusal
        }
    }

    private TcpReservation Refuse(string session, int status, string reason, string title, string detail, params KeyValuePair<string, string>[] headers)
    {
        TcpLog.LoginRefused(_logger, session, detail);
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
