using System.Net;
using System.Net.Sockets;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Hosting.Sockets;
using Tunnel2.Protocol.Tcp;
using Tunnel2.ProxyEntry.Access;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// One session's public TCP port: accepts callers and, for each, checks the session's address rules and its cap on open
/// connections before anything reaches a client, then opens a TCP stream on one of the session's TCP uplinks (in turn)
/// and relays (<see cref="TcpCallerRelay"/>).
/// </summary>
internal sealed class TcpSessionListener : IDisposable
{
    private readonly TcpSessions _owner;
    private readonly Socket _socket;
    private readonly CancellationTokenSource _stop = new();
    private readonly Lock _sync = new();
    private readonly HashSet<TcpCallerRelay> _relays = [];
    private Uplink[] _members = [];
    private int _leases;
    private uint _cursor;

    public TcpSessionListener(TcpSessions owner, string session, Socket socket, IPAddress bindAddress, int port)
    {
        _owner = owner;
        _socket = socket;
        Session = session;
        BindAddress = bindAddress;
        Port = port;
    }

    public string Session { get; }

    public IPAddress BindAddress { get; }

    public int Port { get; }

    public int OpenConnections
    {
        get
        {
            lock (_sync)
            {
                return _relays.Count;
            }
        }
    }

    public void Start() => _ = AcceptLoopAsync();

    public void AddLease() => Interlocked.Increment(ref _leases);

    /// <returns>The leases left.</returns>
    public int RemoveLease() => Interlocked.Decrement(ref _leases);

    public void AddMember(Uplink uplink)
    {
        lock (_sync)
        {
            _members = [.. _members, uplink];
        }
    }

    public void RemoveMember(Uplink uplink)
    {
        lock (_sync)
        {
            _members = Array.FindAll(_members, member => !ReferenceEquals(member, uplink));
        }
    }

    public void CloseIdle(long now, long timeoutMs)
    {
        List<TcpCallerRelay>? idle = null;
        lock (_sync)
        {
            foreach (TcpCallerRelay relay in _relays)
            {
                if (relay.IsIdle(now, timeoutMs))
                {
                    (idle ??= []).Add(relay);
                }
            }
        }

        foreach (TcpCallerRelay relay in idle ?? [])
        {
            TcpLog.CallerIdle(_owner.Logger, Session, relay.Caller, relay.StreamId, timeoutMs);
            relay.CloseIdle();
        }
    }

    /// <summary>Closes the port to new callers; the connections open on it go on.</summary>
    public void StopAccepting()
    {
        _stop.Cancel();
        _socket.Dispose();
    }

    public void Dispose()
    {
        _stop.Cancel();
        _socket.Dispose();
        _stop.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        CancellationToken stop = _stop.Token;
        while (!stop.IsCancellationRequested)
        {
            Socket caller;
            try
            {
                caller = await _socket.AcceptAsync(stop);
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException
                                       || (ex is SocketException && stop.IsCancellationRequested))
            {
                return;
            }
            catch (SocketException ex)
            {
                TcpLog.AcceptFailed(_owner.Logger, Session, Port, ex);
                continue; // one failed accept (a caller gone before it was taken) does not stop the port
            }

            _ = ServeOrLogAsync(caller);
        }
    }

    /// <summary>One caller, start to end; a failure nobody expected is logged and ends that caller only.</summary>
    private async Task ServeOrLogAsync(Socket caller)
    {
        try
        {
            await ServeAsync(caller);
        }
        catch (Exception ex)
        {
            TcpLog.CallerFailed(_owner.Logger, Session, ex);
            caller.Dispose();
        }
    }

    private async Task ServeAsync(Socket caller)
    {
        caller.NoDelay = true;
        UnsentBytesLimit.TryApply(caller, UnsentBytesLimit.Default);
        var remote = caller.RemoteEndPoint as IPEndPoint;
        if (Refusal(remote) is ({ } reason, { } detail))
        {
            Refuse(caller, remote, reason, detail);
            return;
        }

        TcpCallerRelay? relay = null;
        try
        {
            UplinkStream? stream = OpenStream(remote!, (IPEndPoint)caller.LocalEndPoint!, out string? why);
            if (stream is null)
            {
                Refuse(caller, remote, "no-client", why!);
                return;
            }

            relay = new TcpCallerRelay(Session, caller, remote, stream, _owner.Logger, _owner.Metrics);
            lock (_sync)
            {
                _relays.Add(relay);
            }

            _owner.ConnectionOpened();

            await relay.RunAsync();
        }
        finally
        {
            if (relay is not null)
            {
                lock (_sync)
                {
                    _relays.Remove(relay);
                }

                _owner.ConnectionClosed();
            }

            caller.Dispose();
        }
    }

    /// <summary>Why the caller may not go on (checked before anything reaches a client), as a metric's reason and a log's detail; nulls when it may.</summary>
    private (string? Reason, string? Detail) Refusal(IPEndPoint? remote)
    {
        switch (_owner.Visitors.CheckTcpCaller(Session, remote?.Address))
        {
            case VisitorVerdict.AddressDenied:
                return ("address-denied", "address-denied (the session's visitor rules)");
            case VisitorVerdict.CredentialsMissing:
                return ("credentials-required", "credentials-required (the session's visitor rules ask for credentials, which raw TCP cannot carry)");
        }

        lock (_sync)
        {
            return _relays.Count >= _owner.Options.MaxConnectionsPerSession
                ? ("too-many-connections", $"too many connections ({_relays.Count} open, TunnelServer:Tcp:MaxConnectionsPerSession)")
                : (null, null);
        }
    }

    private void Refuse(Socket caller, IPEndPoint? remote, string reason, string detail)
    {
        TcpLog.CallerRefused(_owner.Logger, Session, remote, detail);
        _owner.Metrics.Refused(reason);
        Close(caller);
    }

    /// <summary>A TCP stream on the next member that takes one, each tried once; null (with why) when none does.</summary>
    private UplinkStream? OpenStream(IPEndPoint remote, IPEndPoint local, out string? why)
    {
        why = null;
        Uplink[] members = Volatile.Read(ref _members);
        TcpStreamOpen open = TcpStreamOpen.Of(remote, local);
        uint start = Interlocked.Increment(ref _cursor);
        for (int i = 0; i < members.Length; i++)
        {
            Uplink uplink = members[(int)((start + (uint)i) % (uint)members.Length)];
            if (uplink.PeerReady && TryOpen(uplink, open) is { } stream)
            {
                TcpLog.CallerOpened(_owner.Logger, Session, remote, stream.Id, uplink.Name);
                return stream;
            }
        }

        why = members.Length == 0 ? "no client serves the session now" : "no client of the session takes another stream";
        return null;
    }

    private static UplinkStream? TryOpen(Uplink uplink, TcpStreamOpen open)
    {
        try
        {
            return uplink.TryOpenTcpStream(open, out UplinkStream? stream) == StreamOpenStatus.Opened ? stream : null;
        }
        catch (UplinkClosedException)
        {
            return null; // it closed between the check and the open: the next member may take the caller
        }
    }

    /// <summary>Closes a refused caller at once, with a reset: nothing was relayed, and nothing will be.</summary>
    private static void Close(Socket caller)
    {
        try
        {
            caller.LingerState = new LingerOption(true, 0);
        }
        catch (SocketException)
        {
            // already gone
        }

        caller.Dispose();
    }
}
