using System.Globalization;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Heads;
using Tunnel2.Protocol.Http1;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.TunnelServer.Uplinks.Handshake;

/// <summary>
/// The checks an upgrade request on the tunnel port goes through, in order (docs/protocol.md §1): path and method (404),
/// draining (503), upgrade (426), token (401), session and instance ids (400), the token's sessions (403), protocol
/// version (400), no body (400), declared visitor rules (400 when malformed, 403 when the server takes none).
/// Two transports carry the same frames: the plain HTTP/1.1 upgrade and WebSocket binary messages, for networks whose
/// proxies pass only WebSocket upgrades. A decision on the head alone: no socket, no per-address state
/// (<see cref="AddressGuard"/> applies that).
/// </summary>
/// <param name="clientVisitorPolicies">Whether clients may declare visitor rules for their sessions (TunnelServer:ClientVisitorPolicies).</param>
public sealed class LoginDecision(ClientAuthenticator authenticator, int retryAfterSeconds, bool clientVisitorPolicies = false)
{
    private const string WebSocketUpgradeToken = "websocket";
    private const string WebSocketVersion = "13";

    /// <returns>Either an acceptance or a refusal, never both.</returns>
    public (HandshakeAcceptance? Accepted, HandshakeRefusal? Refused) Decide(Http1Head head, bool draining)
    {
        var login = new Login(head);
        HandshakeRefusal? refused = RequestLine(login)
            ?? Draining(draining)
            ?? Upgrade(login)
            ?? Credentials(login)
            ?? Instance(login)
            ?? Version(login)
            ?? Weight(login)
            ?? Health(login)
            ?? Tcp(login)
            ?? NoBody(head)
            ?? VisitorRules(login);
        return refused is null ? (login.Accept(), null) : (null, refused);
    }

    private static HandshakeRefusal? RequestLine(Login login)
    {
        string[] requestLine = login.Head.StartLine.Split(' ');
        if (requestLine.Length != 3 || requestLine[2] is not ("HTTP/1.1" or "HTTP/1.0"))
        {
            return Refuse(400, "bad-request", "Bad request", "The tunnel port speaks HTTP/1.1.");
        }

        login.Http11 = requestLine[2] == "HTTP/1.1";
        string target = requestLine[1];
        bool onPath = target == HandshakeProtocol.Path
                      || (target.StartsWith(HandshakeProtocol.Path, StringComparison.Ordinal) && target[HandshakeProtocol.Path.Length] == '?');
        return requestLine[0] == "GET" && onPath
            ? null
            : Refuse(404, "not-found", "Not found",
                $"The tunnel port serves only GET {HandshakeProtocol.Path} with Upgrade: {HandshakeProtocol.UpgradeToken}.");
    }

    private HandshakeRefusal? Draining(bool draining) => draining
        ? Refuse(503, "server-draining", "Server shutting down", "The server is draining and takes no new uplinks; connect again later.",
            KeyValuePair.Create("Retry-After", retryAfterSeconds.ToString(CultureInfo.InvariantCulture)))
        : null;

    private static HandshakeRefusal? Upgrade(Login login)
    {
        string? upgrade = login.Head["Upgrade"];
        bool upgradable = login.Http11 && HttpSyntax.ListsToken(login.Head["Connection"], "upgrade");
        bool webSocket = upgradable && string.Equals(upgrade, WebSocketUpgradeToken, StringComparison.OrdinalIgnoreCase);
        if (!upgradable || !(webSocket || string.Equals(upgrade, HandshakeProtocol.UpgradeToken, StringComparison.OrdinalIgnoreCase)))
        {
            return Refuse(426, "upgrade-required", "Upgrade required",
                $"Send Connection: Upgrade and Upgrade: {HandshakeProtocol.UpgradeToken} (or a WebSocket upgrade).",
                KeyValuePair.Create("Upgrade", HandshakeProtocol.UpgradeToken), KeyValuePair.Create("Connection", "Upgrade, close"));
        }

        return webSocket ? WebSocket(login) : null;
    }

    private static HandshakeRefusal? WebSocket(Login login)
    {
        if (login.Head["Sec-WebSocket-Version"] != WebSocketVersion)
        {
            return Refuse(426, "websocket-version", "Upgrade required", $"This server speaks WebSocket version {WebSocketVersion}.",
                KeyValuePair.Create("Sec-WebSocket-Version", WebSocketVersion));
        }

        login.WebSocketKey = login.Head["Sec-WebSocket-Key"];
        return WebSocketKeys.IsValid(login.WebSocketKey)
            ? null
            : Refuse(400, "bad-websocket-key", "Bad request", "Sec-WebSocket-Key must be 16 bytes in base64.");
    }

    /// <summary>The token (401), the session id (400) and whether the token may serve that session (403).</summary>
    private HandshakeRefusal? Credentials(Login login)
    {
        if (Authenticate(login.Head["Authorization"]) is not { } credential)
        {
            return Refuse(401, "bad-token", "Unauthorized", "This server knows no such token: it takes its --token, or a client's token in its credentials file (sent as Authorization: Bearer <token>).",
                KeyValuePair.Create("WWW-Authenticate", "Bearer"));
        }

        login.Credential = credential;
        login.Session = login.Head[HandshakeProtocol.SessionHeader] ?? string.Empty;
        if (!HandshakeProtocol.IsValidSessionId(login.Session))
        {
            return Refuse(400, "bad-session", "Invalid session id",
                $"Send {HandshakeProtocol.SessionHeader} with 1 to 128 characters of A-Z a-z 0-9 - _ . ~, other than '.' and '..'.");
        }

        if (credential.MayServe(login.Session))
        {
            return null;
        }

        HandshakeRefusal outside = Refuse(403, "session-not-allowed", "Forbidden", $"This token may not serve session '{login.Session}'.");
        return outside with { OutsideCredential = (credential.Name, login.Session) };
    }

    private static HandshakeRefusal? Instance(Login login)
    {
        login.Instance = login.Head[HandshakeProtocol.InstanceHeader] is { Length: > 0 } presented ? presented : null;
        return login.Instance is null || HandshakeProtocol.IsValidInstanceId(login.Instance)
            ? null
            : Refuse(400, "bad-instance", "Invalid instance id",
                $"{HandshakeProtocol.InstanceHeader} is optional; when sent it must be 1 to 64 characters of A-Z a-z 0-9 - _ . ~.");
    }

    private static HandshakeRefusal? Version(Login login)
    {
        string? offered = login.Head[HandshakeProtocol.VersionHeader];
        login.Version = HandshakeProtocol.NegotiateVersion(offered);
        return login.Version != 0
            ? null
            : Refuse(400, "bad-version", "Unsupported protocol version",
                $"This server speaks {HandshakeProtocol.VersionHeader} {HandshakeProtocol.CurrentVersion}; the client offered '{offered}'.",
                KeyValuePair.Create(HandshakeProtocol.VersionHeader, HandshakeProtocol.CurrentVersion.ToString(CultureInfo.InvariantCulture)));
    }

    private static HandshakeRefusal? Weight(Login login)
    {
        if (login.Head[HandshakeProtocol.WeightHeader] is not { } declared)
        {
            return null;
        }

        if (!int.TryParse(declared, NumberStyles.None, CultureInfo.InvariantCulture, out int weight)
            || weight is < HandshakeProtocol.MinWeight or > HandshakeProtocol.MaxWeight)
        {
            return Refuse(400, "bad-weight", "Invalid weight",
                $"{HandshakeProtocol.WeightHeader} is optional; when sent it must be a whole number from {HandshakeProtocol.MinWeight} to {HandshakeProtocol.MaxWeight}.");
        }

        login.Weight = weight;
        return null;
    }

    private static HandshakeRefusal? Health(Login login)
    {
        if (login.Head[HandshakeProtocol.HealthHeader] is not { } health)
        {
            return null;
        }

        login.Ready = health == HandshakeProtocol.Ready;
        return login.Ready || health == HandshakeProtocol.Unready
            ? null
            : Refuse(400, "bad-health", "Invalid health",
                $"{HandshakeProtocol.HealthHeader} is optional; when sent it is {HandshakeProtocol.Ready} or {HandshakeProtocol.Unready}.");
    }

    /// <summary>A client that carries raw TCP (version 5): the port itself is reserved once every check has passed.</summary>
    private static HandshakeRefusal? Tcp(Login login)
    {
        if (login.Head[HandshakeProtocol.TcpHeader] is not { } tcp)
        {
            return null;
        }

        login.Tcp = tcp == HandshakeProtocol.TcpOn && login.Version >= HandshakeProtocol.TcpVersion;
        if (!login.Tcp)
        {
            return Refuse(400, "bad-tcp", "Invalid TCP login",
                $"{HandshakeProtocol.TcpHeader} is optional; when sent it is '{HandshakeProtocol.TcpOn}', with {HandshakeProtocol.VersionHeader} {HandshakeProtocol.TcpVersion}.");
        }

        if (login.Head[HandshakeProtocol.TcpPortHeader] is not { } wanted)
        {
            return null;
        }

        login.TcpPort = int.TryParse(wanted, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int port)
            && port is >= 1 and <= 65535 ? port : null;
        return login.TcpPort is not null
            ? null
            : Refuse(400, "bad-tcp", "Invalid TCP login", $"{HandshakeProtocol.TcpPortHeader} is optional; when sent it is a port from 1 to 65535.");
    }

    private static HandshakeRefusal? NoBody(Http1Head head) =>
        head["Transfer-Encoding"] is not null || (head["Content-Length"] is { } length && length != "0")
            ? Refuse(400, "handshake-body", "Bad request", "The upgrade request carries no body.")
            : null;

    private HandshakeRefusal? VisitorRules(Login login)
    {
        if (!DeclaredVisitorPolicy.TryRead(login.Head, login.Session, out VisitorPolicy? declared, out string? policyProblem))
        {
            return Refuse(400, "bad-visitor-policy", "Invalid visitor policy", policyProblem!);
        }

        login.Declared = declared;
        return declared is not null && !clientVisitorPolicies
            ? Refuse(403, "client-policies-off", "Forbidden",
                "This server does not take visitor rules from clients (TunnelServer:ClientVisitorPolicies); its operator sets them in the credentials file.")
            : null;
    }

    private static HandshakeRefusal Refuse(int status, string reason, string title, string detail, params KeyValuePair<string, string>[] headers) =>
        new(status, reason, title, detail, headers);

    private ClientCredential? Authenticate(string? authorization)
    {
        const string scheme = "Bearer ";
        return authorization is not null && authorization.StartsWith(scheme, StringComparison.OrdinalIgnoreCase)
            ? authenticator.Authenticate(authorization.AsSpan(scheme.Length).Trim())
            : null;
    }

    /// <summary>What the checks have read so far; each check fills in the part it vouches for.</summary>
    private sealed class Login(Http1Head head)
    {
        public Http1Head Head { get; } = head;

        public bool Http11 { get; set; }

        public string? WebSocketKey { get; set; }

        public ClientCredential? Credential { get; set; }

        public string Session { get; set; } = string.Empty;

        public string? Instance { get; set; }

        public int Version { get; set; }

        public int Weight { get; set; } = 1;

        public bool Ready { get; set; } = true;

        public bool Tcp { get; set; }

        public int? TcpPort { get; set; }

        public VisitorPolicy? Declared { get; set; }

        public HandshakeAcceptance Accept() =>
            new(Session, Instance, Version, WebSocketKey, Weight, Ready, Declared) { Login = Credential, Tcp = Tcp, TcpPort = TcpPort };
    }
}
