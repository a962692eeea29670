using System.Net;
using System.Net.Sockets;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.TunnelServer.Tcp;

/// <summary>
/// Chooses and binds a session's public TCP port, under <see cref="TcpSessions"/>' lock: a fixed one from the
/// credentials file's <c>TcpPorts</c>, else the one another node of the cluster gave it when the client names that, else
/// the one it had last if still free, else a free one of <c>TunnelServer:Tcp:PortRange</c>, searched from a place that
/// depends on the session's id only.
/// </summary>
internal sealed class TcpPortChooser(TcpPortRange? range, IPAddress bindAddress, CredentialsFile? credentials)
{
    private readonly Dictionary<string, int> _lastPorts = new(StringComparer.Ordinal);

    /// <summary>Whether this server gives ports from a range at all.</summary>
    public bool HasRange => range is not null;

    public int? FixedPortOf(string session) => credentials?.Current.TcpPorts.TryGetValue(session, out int port) == true ? port : null;

    /// <summary>The port another node gave the session, when this server would give it out too (in its range, no fixed port here).</summary>
    public int? Hint(int? fixedPort, int? wanted) => fixedPort is null && wanted is { } hint && range is { } own && own.Contains(hint) ? hint : null;

    /// <summary>A socket listening on the session's port; null when none is free. <paramref name="open"/>: the ports this server has open.</summary>
    public (Socket Socket, int Port)? Bind(string session, int? fixedPort, int? hinted, HashSet<int> open)
    {
        (Socket Socket, int Port)? bound = fixedPort is { } own ? TryBind(own)
            : hinted is { } port ? (open.Contains(port) || IsFixedForAnother(session, port) ? null : TryBind(port))
            : BindInRange(session, open);
        if (bound is { } done)
        {
            _lastPorts[session] = done.Port;
        }

        return bound;
    }

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

    private (Socket Socket, int Port)? BindInRange(string session, HashSet<int> open)
    {
        TcpPortRange ports = range!.Value;
        if (_lastPorts.TryGetValue(session, out int last) && ports.Contains(last) && !IsFixedForAnother(session, last)
            && TryBind(last) is { } again)
        {
            return again;
        }

        int start = StartInRange(session, ports.Count);
        for (int i = 0; i < ports.Count; i++)
        {
            int port = ports.First + ((start + i) % ports.Count);
            if (open.Contains(port) || IsFixedForAnother(session, port) || IsRememberedByAnother(session, port))
            {
                continue;
            }

            if (TryBind(port) is { } bound)
            {
                return bound;
            }
        }

        return null;
    }

    private bool IsFixedForAnother(string session, int port)
    {
        foreach (KeyValuePair<string, int> entry in credentials?.Current.TcpPorts ?? new Dictionary<string, int>())
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
        if (_lastPorts.Count >= range!.Value.Count)
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

    private (Socket Socket, int Port)? TryBind(int port)
    {
        var socket = new Socket(bindAddress.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (bindAddress.Equals(IPAddress.IPv6Any))
            {
                socket.DualMode = true; // "::" takes IPv4 callers too, as Kestrel's listeners do
            }

            socket.Bind(new IPEndPoint(bindAddress, port));
            socket.Listen(512);
            return (socket, port);
        }
        catch (SocketException)
        {
            socket.Dispose();
            return null; // taken by someone else on this machine: the next port, or a refusal
        }
    }
}
