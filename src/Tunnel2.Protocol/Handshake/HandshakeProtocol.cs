namespace Tunnel2.Protocol.Handshake;

/// <summary>
/// Names used by the HTTP/1.1 upgrade that opens an uplink (docs/protocol.md, "Handshake").
/// </summary>
public static class HandshakeProtocol
{
    /// <summary>The request path on the tunnel port.</summary>
    public const string Path = "/tunnel2/connect";

    /// <summary>The token in the <c>Upgrade</c> header.</summary>
    public const string UpgradeToken = "tunnel2";

    /// <summary>Request: the session the client serves.</summary>
    public const string SessionHeader = "Tunnel2-Session";

    /// <summary>Request: comma-separated protocol versions the client speaks; response: the one chosen.</summary>
    public const string VersionHeader = "Tunnel2-Version";

    /// <summary>
    /// Request, optional: a random id the client makes once per run (e.g. a GUID). A login with the same session and
    /// instance id as a live uplink replaces that uplink: it is a leftover of a connection the client gave up on.
    /// </summary>
    public const string InstanceHeader = "Tunnel2-Instance";

    /// <summary>
    /// Request, optional: the client's share of the session's traffic under the weighted strategy, 1 to 100 (default 1).
    /// </summary>
    public const string WeightHeader = "Tunnel2-Weight";

    /// <summary>
    /// Request, optional (version 4): <c>ready</c> or <c>unready</c>, whether the client's backend passed its last health
    /// probe when it logged in. Later changes travel in Health frames. Absent means ready.
    /// </summary>
    public const string HealthHeader = "Tunnel2-Health";

    /// <summary>
    /// Request, optional: the visitor rules the client asks for its session, when the server lets clients declare them
    /// (<c>TunnelServer:ClientVisitorPolicies</c>; otherwise 403). Basic: <c>user:bcrypt-hash</c> (the client hashes the
    /// password, the server never sees it); Allow and Deny: comma-separated networks in CIDR form.
    /// </summary>
    public const string VisitorBasicHeader = "Tunnel2-Visitor-Basic";

    public const string VisitorAllowHeader = "Tunnel2-Visitor-Allow";

    public const string VisitorDenyHeader = "Tunnel2-Visitor-Deny";

    /// <summary>
    /// Request, optional (version 5): <c>on</c> when the client also carries raw TCP (its <c>--tcp</c> target). The server
    /// then gives the session a public TCP port and names it in <see cref="TcpAddressHeader"/>, or refuses the login.
    /// </summary>
    public const string TcpHeader = "Tunnel2-Tcp";

    /// <summary>The one value of <see cref="TcpHeader"/>.</summary>
    public const string TcpOn = "on";

    /// <summary>Response (version 5, to a login that sent <see cref="TcpHeader"/>): <c>host:port</c> where callers reach the session's TCP port.</summary>
    public const string TcpAddressHeader = "Tunnel2-Tcp-Address";

    /// <summary>
    /// Request, optional (version 5, with <see cref="TcpHeader"/>): the port another server (a node of the same cluster)
    /// gave the session, so that every node listens on the same one. A server whose range holds it gives that port, or
    /// refuses the login (503) while it is taken, rather than give the session another.
    /// </summary>
    public const string TcpPortHeader = "Tunnel2-Tcp-Port";

    public const string Ready = "ready";

    public const string Unready = "unready";

    public const int MinWeight = 1;

    public const int MaxWeight = 100;

    /// <summary>Response: the largest frame payload either side may send, in bytes.</summary>
    public const string MaxFramePayloadHeader = "Tunnel2-Max-Frame";

    /// <summary>Response: the initial per-stream flow-control window, in bytes.</summary>
    public const string InitialWindowHeader = "Tunnel2-Initial-Window";

    /// <summary>
    /// Response (version 2): the connection window, in bytes: beyond the initial window of each open stream, the most
    /// credit either end grants its peer over all streams and has not yet received.
    /// </summary>
    public const string ConnectionWindowHeader = "Tunnel2-Connection-Window";

    /// <summary>Response: the most streams the server opens at once on this uplink.</summary>
    public const string MaxStreamsHeader = "Tunnel2-Max-Streams";

    /// <summary>
    /// Response (informational, any version): the URL where callers reach the session, which the client prints. A
    /// client that does not know it ignores it.
    /// </summary>
    public const string PublicUrlHeader = "Tunnel2-Public-Url";

    /// <summary>
    /// Response to a refused login (informational, any version): the problem type's last part (<c>tcp-off</c>), the
    /// same as the body's <c>type</c>, for a client that cannot read the body (a WebSocket client sees only the head).
    /// </summary>
    public const string ProblemHeader = "Tunnel2-Problem";

    /// <summary>
    /// The versions this build speaks, newest last. Version 2 added the connection window (docs/protocol.md §4); a
    /// version-1 peer would grant every stream a fixed window however many streams are open, so it is refused.
    /// Version 3 added upgrades (docs/protocol.md §3, "Upgrades"): a version-2 client would send an upgrade request
    /// to its backend as a plain request with a chunked body and wait for a body that never comes, so it is refused too.
    /// Version 4 added the Health frame and the <see cref="Frames.ProtocolErrorCode.BackendConnectFailed"/> reset code;
    /// a version-3 peer simply sends neither, so both are spoken.
    /// Version 5 added raw TCP streams (the TcpOpen frame); the server opens them only on a version-5 uplink that asked
    /// for TCP, so versions 3 and 4 are still spoken.
    /// </summary>
    public static ReadOnlySpan<int> SupportedVersions => [3, 4, 5];

    public const int CurrentVersion = 5;

    /// <summary>The first version with TcpOpen frames and the <see cref="TcpHeader"/> login.</summary>
    public const int TcpVersion = 5;

    /// <summary>The first version with Health frames and <see cref="Frames.ProtocolErrorCode.BackendConnectFailed"/>.</summary>
    public const int HealthVersion = 4;

    /// <summary>What a client offers in <see cref="VersionHeader"/>: every version it speaks, newest first.</summary>
    public const string OfferedVersions = "5, 4, 3";

    /// <summary>The longest session id.</summary>
    public const int MaxSessionIdLength = 128;

    /// <summary>
    /// Session ids are path segments: 1 to 128 characters of [A-Za-z0-9._~-], and not <c>.</c> or <c>..</c> (which a
    /// path resolves away, so no URL could reach such a session).
    /// </summary>
    public static bool IsValidSessionId(ReadOnlySpan<char> session)
    {
        if (session.Length is 0 or > MaxSessionIdLength || session is "." or "..")
        {
            return false;
        }

        foreach (char c in session)
        {
            if (!IsSessionIdChar(c))
            {
                return false;
            }
        }

        return true;
    }

    public static bool IsSessionIdChar(char c) => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.' or '~';

    /// <summary>Instance ids: 1 to 64 characters of [A-Za-z0-9._~-], like session ids.</summary>
    public static bool IsValidInstanceId(ReadOnlySpan<char> instance) => instance.Length <= 64 && IsValidSessionId(instance);

    /// <summary>Picks the highest version both sides speak from a header like <c>1, 2</c>; 0 when none.</summary>
    public static int NegotiateVersion(string? offered)
    {
        if (string.IsNullOrWhiteSpace(offered))
        {
            return 0;
        }

        int best = 0;
        foreach (Range part in offered.AsSpan().Split(','))
        {
            if (int.TryParse(offered.AsSpan()[part].Trim(), out int version) && SupportedVersions.Contains(version) && version > best)
            {
                best = version;
            }
        }

        return best;
    }
}
