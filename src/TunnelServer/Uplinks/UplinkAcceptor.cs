using System.IO.Pipelines;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Problems;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Diagnostics;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// Serves the tunnel port: checks the upgrade request (path, token, session, version), switches the connection to
/// the frame protocol, registers the uplink for its session and runs it until it closes.
/// </summary>
public sealed class UplinkAcceptor
{
    private readonly SessionRegistry _registry;
    private readonly UplinkSettings _settings;
    private readonly byte[] _token;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger<UplinkAcceptor> _logger;
    private readonly TunnelServerMetrics _metrics;
    private readonly PublicDrain _drain;
    private readonly int _retryAfterSeconds;

    public UplinkAcceptor(
        SessionRegistry registry,
        IOptions<TunnelServerOptions> options,
        IOptions<ProxyEntryOptions> proxyOptions,
        ILoggerFactory loggerFactory,
        TunnelServerMetrics metrics,
        PublicDrain drain)
    {
        _registry = registry;
        _settings = options.Value.ToUplinkSettings();
        _token = Encoding.UTF8.GetBytes(options.Value.Token);
        _loggerFactory = loggerFactory;
        _logger = loggerFactory.CreateLogger<UplinkAcceptor>();
        _metrics = metrics;
        _drain = drain;
        _retryAfterSeconds = proxyOptions.Value.RetryAfterSeconds;
    }

    public async Task AcceptAsync(HttpContext context)
    {
        HttpRequest request = context.Request;
        if (!HttpMethods.IsGet(request.Method) || request.Path != HandshakeProtocol.Path)
        {
            await RefuseAsync(context, StatusCodes.Status404NotFound, "not-found", "Not found",
                $"The tunnel port serves only GET {HandshakeProtocol.Path} with Upgrade: {HandshakeProtocol.UpgradeToken}.");
            return;
        }

        if (_drain.IsDraining)
        {
            context.Response.Headers.RetryAfter = _retryAfterSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
            await RefuseAsync(context, StatusCodes.Status503ServiceUnavailable, "server-draining", "Server shutting down",
                "The server is draining and takes no new uplinks; connect again later.");
            return;
        }

        // Two transports carry the same frames: the plain HTTP/1.1 upgrade (the default) and WebSocket binary messages,
        // for networks whose proxies pass only WebSocket upgrades (docs/protocol.md §1).
        bool webSocket = context.WebSockets.IsWebSocketRequest;
        IHttpUpgradeFeature? upgrade = context.Features.Get<IHttpUpgradeFeature>();
        if (!webSocket
            && (upgrade is not { IsUpgradableRequest: true }
                || !string.Equals(request.Headers.Upgrade.ToString(), HandshakeProtocol.UpgradeToken, StringComparison.OrdinalIgnoreCase)))
        {
            context.Response.Headers.Upgrade = HandshakeProtocol.UpgradeToken;
            context.Response.Headers.Connection = "Upgrade";
            await RefuseAsync(context, StatusCodes.Status426UpgradeRequired, "upgrade-required", "Upgrade required",
                $"Send Connection: Upgrade and Upgrade: {HandshakeProtocol.UpgradeToken} (or a WebSocket upgrade).");
            return;
        }

        if (!HasValidToken(request.Headers.Authorization))
        {
            context.Response.Headers.WWWAuthenticate = "Bearer";
            await RefuseAsync(context, StatusCodes.Status401Unauthorized, "bad-token", "Unauthorized",
                "A valid token is required: send Authorization: Bearer <token>.");
            return;
        }

        string session = request.Headers[HandshakeProtocol.SessionHeader].ToString();
        if (!HandshakeProtocol.IsValidSessionId(session))
        {
            await RefuseAsync(context, StatusCodes.Status400BadRequest, "bad-session", "Invalid session id",
                $"Send {HandshakeProtocol.SessionHeader} with 1 to 128 characters of A-Z a-z 0-9 - _ . ~.");
            return;
        }

        string? instance = request.Headers[HandshakeProtocol.InstanceHeader].ToString() is { Length: > 0 } presented ? presented : null;
        if (instance is not null && !HandshakeProtocol.IsValidInstanceId(instance))
        {
            await RefuseAsync(context, StatusCodes.Status400BadRequest, "bad-instance", "Invalid instance id",
                $"{HandshakeProtocol.InstanceHeader} is optional; when sent it must be 1 to 64 characters of A-Z a-z 0-9 - _ . ~.");
            return;
        }

        int version = HandshakeProtocol.NegotiateVersion(request.Headers[HandshakeProtocol.VersionHeader]);
        if (version == 0)
        {
            context.Response.Headers[HandshakeProtocol.VersionHeader] = HandshakeProtocol.CurrentVersion.ToString(System.Globalization.CultureInfo.InvariantCulture);
            await RefuseAsync(context, StatusCodes.Status400BadRequest, "bad-version", "Unsupported protocol version",
                $"This server speaks {HandshakeProtocol.VersionHeader} {HandshakeProtocol.CurrentVersion}; the client offered '{request.Headers[HandshakeProtocol.VersionHeader]}'.");
            return;
        }

        IHeaderDictionary answer = context.Response.Headers;
        if (!webSocket)
        {
            answer.Upgrade = HandshakeProtocol.UpgradeToken;
        }

        answer[HandshakeProtocol.VersionHeader] = version.ToString(System.Globalization.CultureInfo.InvariantCulture);
        answer[HandshakeProtocol.MaxFramePayloadHeader] = _settings.MaxFramePayload.ToString(System.Globalization.CultureInfo.InvariantCulture);
        answer[HandshakeProtocol.InitialWindowHeader] = _settings.InitialStreamWindow.ToString(System.Globalization.CultureInfo.InvariantCulture);
        answer[HandshakeProtocol.ConnectionWindowHeader] = _settings.ConnectionWindow.ToString(System.Globalization.CultureInfo.InvariantCulture);
        answer[HandshakeProtocol.MaxStreamsHeader] = _settings.MaxConcurrentStreams.ToString(System.Globalization.CultureInfo.InvariantCulture);

        Stream opaque = webSocket
            ? WebSocketStream.Create(
                await context.WebSockets.AcceptWebSocketAsync(new WebSocketAcceptContext { KeepAliveInterval = TimeSpan.Zero }),
                WebSocketMessageType.Binary,
                ownsWebSocket: true)
            : await upgrade!.UpgradeAsync();
        // Zero-byte reads: an idle uplink (the usual state of most of them) then holds no 64 KiB read buffer while it
        // waits; that buffer was most of an idle session's memory (docs/benchmarks/2026-11-23-idle-sessions.md).
        var transport = DuplexPipe.Over(opaque, zeroByteReads: true);
        var remote = context.Connection.RemoteIpAddress;
        var uplink = new Uplink(transport, _settings, UplinkRole.Server, _loggerFactory.CreateLogger<Uplink>(),
            name: $"{session}@{remote}:{context.Connection.RemotePort}{(webSocket ? " (websocket)" : string.Empty)}");

        Uplink? replaced = _registry.Register(session, uplink, instance);
        _metrics.UplinkConnected();
        TunnelServerLog.UplinkConnected(_logger, session, remote, version, webSocket ? "websocket" : "upgrade");
        if (replaced is not null)
        {
            TunnelServerLog.UplinkReplaced(_logger, session, replaced.Name, instance!, SessionRegistry.ReplacedReason);
        }

        try
        {
            // Neither shutdown nor Kestrel's connection-closed signal cuts the uplink: the drain (GracefulShutdown) closes
            // it after its streams finish, and the reader sees the end of the connection itself, so a frame cut short by
            // the peer is reported as the protocol error it is rather than as a local stop.
            await uplink.RunAsync(CancellationToken.None);
        }
        finally
        {
            _registry.Unregister(session, uplink);
            _metrics.UplinkDisconnected();
            TunnelServerLog.UplinkDisconnected(_logger, session, remote, uplink.CloseReason ?? "closed");
            await opaque.DisposeAsync();
        }
    }

    private bool HasValidToken(StringValues authorization)
    {
        string value = authorization.ToString();
        const string scheme = "Bearer ";
        if (!value.StartsWith(scheme, StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }

        byte[] presented = Encoding.UTF8.GetBytes(value.AsSpan(scheme.Length).Trim().ToString());
        return CryptographicOperations.FixedTimeEquals(presented, _token);
    }

    private async Task RefuseAsync(HttpContext context, int status, string reason, string title, string detail)
    {
        TunnelServerLog.HandshakeRefused(_logger, context.Connection.RemoteIpAddress, status, reason);
        _metrics.HandshakeRefused(reason);
        await ProblemResponse.WriteAsync(context, status, $"urn:tunnel2:problem:{reason}", title, detail);
    }
}
