using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>A login the server takes: who logs in, which protocol version, over which transport.</summary>
/// <param name="WebSocketKey">The <c>Sec-WebSocket-Key</c> of a WebSocket upgrade; null for the plain upgrade.</param>
/// <param name="Weight">The client's share under the weighted strategy (1 when it declared none).</param>
/// <param name="Ready">Whether the client's backend passed its health probe at login (true when it sent no health).</param>
/// <param name="DeclaredPolicy">The visitor rules the client declared for its session, if any (and if the server allows them).</param>
public sealed record HandshakeAcceptance(
    string Session, string? Instance, int Version, string? WebSocketKey, int Weight = 1, bool Ready = true, VisitorPolicy? DeclaredPolicy = null)
{
    /// <summary>The credential the client logged in with (logs name it, never the token), for revoking the uplink if the credentials file drops it.</summary>
    public ClientCredential? Login { get; init; }

    /// <summary>The client carries raw TCP too (<c>Tunnel2-Tcp: on</c>, version 5): its session gets a public TCP port.</summary>
    public bool Tcp { get; init; }

    /// <summary>The port another node gave the session (<c>Tunnel2-Tcp-Port</c>), which this one gives too when it can.</summary>
    public int? TcpPort { get; init; }

    public bool IsWebSocket => WebSocketKey is not null;
}

/// <summary>A login the server refuses: the status, a short reason (logs, metrics, the problem type) and what to tell the client.</summary>
public sealed record HandshakeRefusal(int Status, string Reason, string Title, string Detail, params KeyValuePair<string, string>[] Headers)
{
    /// <summary>A valid credential asking for a session it may not serve: its name and the session, for the log.</summary>
    public (string Credential, string Session)? OutsideCredential { get; init; }
}
