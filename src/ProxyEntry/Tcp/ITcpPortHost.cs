using Microsoft.Extensions.Logging;
using Tunnel2.Balancing.Health;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Sessions;

namespace Tunnel2.ProxyEntry.Tcp;

/// <summary>
/// What a session's public TCP port (<see cref="TcpSessionListener"/>) needs from the server that opened it: the TCP
/// options, the sessions' policies (their visitor rules among them), the log and the instruments, and the count of open connections that a drain waits on.
/// The host's port registry (TunnelServer's <c>TcpSessions</c>) plays it, so the door does not depend on the host.
/// </summary>
public interface ITcpPortHost
{
    TcpServerOptions Options { get; }

    /// <summary>When a client whose target keeps refusing is passed over, built once from <see cref="Options"/>.</summary>
    EjectionOptions Ejection { get; }

    ILogger Logger { get; }

    TcpMetrics Metrics { get; }

    /// <summary>Each session's settings; a port reads its session's policy here once per caller: its visitor rules and its cap on connections.</summary>
    SessionPolicies Policies { get; }

    /// <summary>The event loop that relays the callers (<c>TunnelServer:Tcp:Engine</c> = <c>Loop</c>); null: the runtime's sockets do.</summary>
    TcpCallerLoop? CallerLoop { get; }

    /// <summary>A caller was taken: the drain waits for it from here.</summary>
    void ConnectionOpened();

    /// <summary>A caller taken by <see cref="ConnectionOpened"/> has gone.</summary>
    void ConnectionClosed();
}
