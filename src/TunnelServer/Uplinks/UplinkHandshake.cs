using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Http1;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.TunnelServer.Uplinks;

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

    public bool IsWebSocket => WebSocketKey is not null;
}

/// <summary>A login the server refuses: the status, a short reason (logs, metrics, the problem type) and what to tell the client.</summary>
public sealed record HandshakeRefusal(int Status, string Reason, string Title, string Detail, params KeyValuePair<string, string>[] Headers)
{
    /// <summary>A valid credential asking for a session it may not serve: its name and the session, for the log.</summary>
    public (string Credential, string Session)? OutsideCredential { get; init; }
}

/// <summary>
/// The checks an upgrade request on the tunnel port goes through, in order (docs/protocol.md §1): path and method (404),
/// draining (503), upgrade (426), token (401), session and instance ids (400), the token's sessions (403), protocol
/// version (400), no body (400), declared visitor rules (400 when malformed, 403 when the server takes none).
/// Two transports carry the same frames: the plain HTTP/1.1 upgrade and WebSocket binary messages, for networks whose
/// proxies pass only WebSocket upgrades.
/// </summary>
/// <param name="clientVisitorPolicies">Whether clients may declare visitor rules for their sessions (TunnelServer:ClientVisitorPolicies).</param>
public sealed class UplinkHandshake(ClientAuthenticator authenticator, int retryAfterSeconds, bool clientVisitorPolicies = false)
{
    private const string WebSocketUpgradeToken = "websocket";
    private const string WebSocketVersion = "13";

    /// <returns>Either an acceptance or a refusal, never both.</returns>
    public (HandshakeAcceptance? Accepted, HandshakeRefusal? Refused) Decide(Http1Head head, bool draining)
    {
        string[] requestLine = head.StartLine.Split(' ');
        if (requestLine.Length != 3 || requestLine[2] is not ("HTTP/1.1" or "HTTP/1.0"))
        {
            return Refuse(400, "bad-request", "Bad request", "The tunnel port speaks HTTP/1.1.");
        }

        string target = requestLine[1];
        bool onPath = target == HandshakeProtocol.Path
                      || (target.StartsWith(HandshakeProtocol.Path, StringComparison.Ordinal) && target[HandshakeProtocol.Path.Length] == '?');
        if (requestLine[0] != "GET" || !onPath)
        {
            return Refuse(404, "not-found", "Not found",
                $"The tunnel port serves only GET {HandshakeProtocol.Path} with Upgrade: {HandshakeProtocol.UpgradeToken}.");
        }

        if (draining)
        {
            return Refuse(503, "server-draining", "Server shutting down", "The server is draining and takes no new uplinks; connect again later.",
                KeyValuePair.Create("Retry-After", retryAfterSeconds.ToString(CultureInfo.InvariantCulture)));
        }

        string? upgrade = head["Upgrade"];
        bool upgradable = requestLine[2] == "HTTP/1.1" && HasToken(head["Connection"], "upgrade");
        bool webSocket = upgradable && string.Equals(upgrade, WebSocketUpgradeToken, StringComparison.OrdinalIgnoreCase);
        if (!upgradable || !(webSocket || string.Equals(upgrade, HandshakeProtocol.UpgradeToken, StringComparison.OrdinalIgnoreCase)))
        {
            return Refuse(426, "upgrade-required", "Upgrade required",
                $"Send Connection: Upgrade and Upgrade: {HandshakeProtocol.UpgradeToken} (or a WebSocket upgrade).",
                KeyValuePair.Create("Upgrade", HandshakeProtocol.UpgradeToken), KeyValuePair.Create("Connection", "Upgrade, close"));
        }

        string? webSocketKey = null;
        if (webSocket)
        {
            if (head["Sec-WebSocket-Version"] != WebSocketVersion)
            {
                return Refuse(426, "websocket-version", "Upgrade required", $"This server speaks WebSocket version {WebSocketVersion}.",
                    KeyValuePair.Create("Sec-WebSocket-Version", WebSocketVersion));
            }

            webSocketKey = head["Sec-WebSocket-Key"];
            if (!IsWebSocketKey(webSocketKey))
            {
                return Refuse(400, "bad-websocket-key", "Bad request", "Sec-WebSocket-Key must be 16 bytes in base64.");
            }
        }

        if (Authenticate(head["Authorization"]) is not { } credential)
        {
            return Refuse(401, "bad-token", "Unauthorized", "A valid token is required: send Authorization: Bearer <token>.",
                KeyValuePair.Create("WWW-Authenticate", "Bearer"));
        }

        string session = head[HandshakeProtocol.SessionHeader] ?? string.Empty;
        if (!HandshakeProtocol.IsValidSessionId(session))
        {
            return Refuse(400, "bad-session", "Invalid session id",
                $"Send {HandshakeProtocol.SessionHeader} with 1 to 128 characters of A-Z a-z 0-9 - _ . ~, other than '.' and '..'.");
        }

        if (!credential.MayServe(session))
        {
            (HandshakeAcceptance?, HandshakeRefusal?) refused = Refuse(403, "session-not-allowed", "Forbidden",
                $"This token may not serve session '{session}'.");
            return (null, refused.Item2! with { OutsideCredential = (credential.Name, session) });
        }

        string? instance = head[HandshakeProtocol.InstanceHeader] is { Length: > 0 } presented ? presented : null;
        if (instance is not null && !HandshakeProtocol.IsValidInstanceId(instance))
        {
            return Refuse(400, "bad-instance", "Invalid instance id",
                $"{HandshakeProtocol.InstanceHeader} is optional; when sent it must be 1 to 64 characters of A-Z a-z 0-9 - _ . ~.");
        }

        string? offered = head[HandshakeProtocol.VersionHeader];
        int version = HandshakeProtocol.NegotiateVersion(offered);
        if (version == 0)
        {
            return Refuse(400, "bad-version", "Unsupported protocol version",
                $"This server speaks {HandshakeProtocol.VersionHeader} {HandshakeProtocol.CurrentVersion}; the client offered '{offered}'.",
                KeyValuePair.Create(HandshakeProtocol.VersionHeader, HandshakeProtocol.CurrentVersion.ToString(CultureInfo.InvariantCulture)));
        }

        int weight = 1;
        if (head[HandshakeProtocol.WeightHeader] is { } declaredWeight
            && (!int.TryParse(declaredWeight, NumberStyles.None, CultureInfo.InvariantCulture, out weight)
                || weight is < HandshakeProtocol.MinWeight or > HandshakeProtocol.MaxWeight))
        {
            return Refuse(400, "bad-weight", "Invalid weight",
                $"{HandshakeProtocol.WeightHeader} is optional; when sent it must be a whole number from {HandshakeProtocol.MinWeight} to {HandshakeProtocol.MaxWeight}.");
        }

        bool ready = true;
        if (head[HandshakeProtocol.HealthHeader] is { } health)
        {
            ready = health == HandshakeProtocol.Ready;
            if (!ready && health != HandshakeProtocol.Unready)
            {
                return Refuse(400, "bad-health", "Invalid health",
                    $"{HandshakeProtocol.HealthHeader} is optional; when sent it is {HandshakeProtocol.Ready} or {HandshakeProtocol.Unready}.");
            }
        }

        if (head["Transfer-Encoding"] is not null || (head["Content-Length"] is { } length && length != "0"))
        {
            return Refuse(400, "handshake-body", "Bad request", "The upgrade request carries no body.");
        }

        if (!DeclaredVisitorPolicy.TryRead(head, session, out VisitorPolicy? declared, out string? policyProblem))
        {
            return Refuse(400, "bad-visitor-policy", "Invalid visitor policy", policyProblem!);
        }

        if (declared is not null && !clientVisitorPolicies)
        {
            return Refuse(403, "client-policies-off", "Forbidden",
                "This server does not take visitor rules from clients (TunnelServer:ClientVisitorPolicies); its operator sets them in the credentials file.");
        }

        return (new HandshakeAcceptance(session, instance, version, webSocketKey, weight, ready, declared) { Login = credential }, null);
    }

    /// <summary>The <c>Sec-WebSocket-Accept</c> answer to a key (RFC 6455 §4.2.2).</summary>
    public static string WebSocketAccept(string key)
    {
        Span<byte> hash = stackalloc byte[SHA1.HashSizeInBytes];
#pragma warning disable CA5350 // RFC 6455 fixes SHA-1 here; it proves the server read the key, it protects nothing
        SHA1.HashData(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"), hash);
#pragma warning restore CA5350
        return Convert.ToBase64String(hash);
    }

    private static (HandshakeAcceptance?, HandshakeRefusal?) Refuse(int status, string reason, string title, string detail, params KeyValuePair<string, string>[] headers) =>
        (null, new HandshakeRefusal(status, reason, title, detail, headers));

    private ClientCredential? Authenticate(string? authorization)
    {
        const string scheme = "Bearer ";
        return authorization is not null && authorization.StartsWith(scheme, StringComparison.OrdinalIgnoreCase)
            ? authenticator.Authenticate(authorization.AsSpan(scheme.Length).Trim())
            : null;
    }

    /// <summary>Whether a comma-separated header such as <c>Connection: keep-alive, Upgrade</c> names <paramref name="token"/>.</summary>
    private static bool HasToken(string? header, string token)
    {
        if (header is null)
        {
            return false;
        }

        foreach (Range part in header.AsSpan().Split(','))
        {
            if (header.AsSpan()[part].Trim().Equals(token, StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }

    private static bool IsWebSocketKey(string? key)
    {
        Span<byte> decoded = stackalloc byte[24];
        return key is { Length: 24 } && Convert.TryFromBase64String(key, decoded, out int written) && written == 16;
    }
}
