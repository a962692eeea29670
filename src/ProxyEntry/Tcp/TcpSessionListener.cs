using System.Net;
using System.Net.Sockets;
using Tunnel2.Hosting.Sockets;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Protocol.Tcp;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Policy;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// One session's public TCP port: accepts callers and, for each, checks the session's address rules and its cap on open
/// connections (its <see cref="SessionPolicy"/>, read once per caller) before anything reaches a client, then puts it on one of the session's TCP clients under
/// <see cref="TcpServerOptions.Strategy"/>, trying the next when a client's target refuses (<see cref="TcpDispatch"/>),
/// and relays (<see cref="LoopCallerConnection"/> on the callers' event loop, or <see cref="TcpCallerRelay"/> on the runtime's sockets).
/// The host's port registry (TunnelServer's <c>TcpSessions</c>) opens one per session, leases it to that session's TCP
/// logins and adds each login's uplink as a client; the rest of the door stays inside ProxyEntry.
/// </summary>
public sealed class TcpSessionListener : IDisposable
{
    private readonly ITcpPortHost _owner;
    private readonly Socket _socket;
    private readonly CancellationTokenSource _stop = new();
    private readonly CancellationToken _stopping;
    private readonly Lock _sync = new();
    private readonly HashSet<ITcpCallerRelay> _relays = [];
    private int _leases;
    private int _dispatching;

    public TcpSessionListener(ITcpPortHost owner, string session, Socket socket, IPAddress bindAddress, int port)
    {
        _owner = owner;
        _socket = socket;
        _stopping = _stop.Token; // kept: callers still being served may read it after Dispose
        Session = session;
        Members = new TcpMembers(owner, session);
        BindAddress = bindAddress;
        Port = port;
    }

    public string Session { get; }

    public IPAddress BindAddress { get; }

    public int Port { get; }

    /// <summary>Connections relayed now, and those still being put on a client.</summary>
    public int OpenConnections
    {
        get
        {
            lock (_sync)
            {
                return _relays.Count + Volatile.Read(ref _dispatching);
            }
        }
    }

    /// <summary>The session's TCP clients and the choice among them.</summary>
    internal TcpMembers Members { get; }

    public void Start() => _ = AcceptLoopAsync();

    /// <summary>Makes a logged-in client's uplink one this port's callers are sent to.</summary>
    /// <param name="weight">The client's share under the weighted strategy (<c>--weight</c>).</param>
    public void AddClient(Uplink uplink, int weight) => Members.Add(uplink, weight);

    /// <summary>Sends no more new callers to that uplink; the callers it carries go on.</summary>
    public void RemoveClient(Uplink uplink) => Members.Remove(uplink);

    /// <summary>One more login holds the port open.</summary>
    public void AddLease() => Interlocked.Increment(ref _leases);

    /// <returns>The leases left.</returns>
    public int RemoveLease() => Interlocked.Decrement(ref _leases);

    public void CloseIdle(long now, long timeoutMs)
    {
        List<ITcpCallerRelay>? idle = null;
        lock (_sync)
        {
            foreach (ITcpCallerRelay relay in _relays)
            {
                if (relay.IsIdle(now, timeoutMs))
                {
                    (idle ??= []).Add(relay);
                }
            }
        }

        foreach (ITcpCallerRelay relay in idle ?? [])
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
        if (Refusal(remote, _owner.Policies.For(Session)) is ({ } reason, { } detail))
        {
            Refuse(caller, remote, reason, detail);
            return;
        }

        TcpDispatch? dispatch = null;
        ITcpCallerRelay? relay = null;
        bool dispatching = true; // counted towards the cap from here, among the relays once one runs
        Interlocked.Increment(ref _dispatching);
        _owner.ConnectionOpened(); // a server's drain waits for the caller from here, dispatched or relayed
        try
        {
            dispatch = await DispatchAsync(caller, remote!);
            if (dispatch is null)
            {
                return;
            }

            relay = RelayFor(caller, remote, dispatch);
            lock (_sync)
            {
                _relays.Add(relay);
                Interlocked.Decrement(ref _dispatching);
                dispatching = false;
            }

            await relay.RunAsync();
        }
        finally
        {
            if (dispatching)
            {
                Interlocked.Decrement(ref _dispatching);
            }

            if (relay is not null)
            {
                lock (_sync)
                {
                    _relays.Remove(relay);
                }
            }

            _owner.ConnectionClosed();

            dispatch?.Member?.Closed();
            caller.Dispose();
        }
    }

    /// <summary>
    /// The relay for a dispatched caller: on the callers' loop when the server runs one, else (and for a caller whose reset
    /// the dispatch met already, which has nothing to relay) on the runtime's sockets.
    /// </summary>
    private ITcpCallerRelay RelayFor(Socket caller, IPEndPoint? remote, TcpDispatch dispatch) =>
        _owner.CallerLoop is { } loop && dispatch.CallerFailure is null
            ? new LoopCallerConnection(loop, Session, caller, remote, dispatch.Stream!, _owner.Metrics)
            : new TcpCallerRelay(Session, caller, remote, dispatch.Stream!, _owner.Logger, _owner.Metrics, dispatch.CallerFailure);

    /// <summary>The caller put on a client (<see cref="TcpDispatch"/>); null when none took it (refused and logged here).</summary>
    private async Task<TcpDispatch?> DispatchAsync(Socket caller, IPEndPoint remote)
    {
        var dispatch = new TcpDispatch(this, caller, remote, TcpStreamOpen.Of(remote, (IPEndPoint)caller.LocalEndPoint!), _owner.CallerLoop?.Loop);
        TcpDispatchOutcome outcome;
        try
        {
            outcome = await dispatch.RunAsync(_owner.Options.IdleTimeout, _stopping);
        }
        catch
        {
            dispatch.Drop();
            throw;
        }

        switch (outcome)
        {
            case TcpDispatchOutcome.Connected:
                TcpLog.CallerOpened(_owner.Logger, Session, remote, dispatch.Stream!.Id, dispatch.Member!.Uplink.Name);
                return dispatch;
            case TcpDispatchOutcome.AllRefused:
                TcpLog.CallerRefused(_owner.Logger, Session, remote, $"every client's target refused it ({dispatch.Refusals} tried)");
                _owner.Metrics.Refused("targets-refused");
                TcpCallerClose.Finish(caller);
                return null;
            default:
                Refuse(caller, remote, "no-client", Members.Count == 0 ? "no client serves the session now"
                    : "no client of the session takes another stream (each is full, unready, draining or ejected)");
                return null;
        }
    }

    /// <summary>
    /// Why the caller may not go on (checked before anything reaches a client), as a metric's reason and a log's detail;
    /// nulls when it may. <paramref name="policy"/> is the session's policy, read once for this caller: its visitor
    /// rules (the address gates; a rule that asks for credentials closes the port to TCP) and its cap on connections.
    /// </summary>
    private (string? Reason, string? Detail) Refusal(IPEndPoint? remote, SessionPolicy policy)
    {
        switch (policy.Visitors.CheckTcpCaller(remote?.Address))
        {
            case VisitorVerdict.AddressDenied:
                return ("address-denied", "address-denied (the session's visitor rules)");
            case VisitorVerdict.CredentialsMissing:
                return ("credentials-required", "credentials-required (the session's visitor rules ask for credentials, which raw TCP cannot carry)");
        }

        int open = OpenConnections;
        return open >= policy.MaxTcpConnections
            ? ("too-many-connections", $"too many connections ({open} open, the session's MaxTcpConnections: ProxyEntry:Sessions:<id> or ProxyEntry:SessionDefaults)")
            : (null, null);
    }

    private void Refuse(Socket caller, IPEndPoint? remote, string reason, string detail)
    {
        TcpLog.CallerRefused(_owner.Logger, Session, remote, detail);
        _owner.Metrics.Refused(reason);
        TcpCallerClose.Reset(caller);
    }
}
