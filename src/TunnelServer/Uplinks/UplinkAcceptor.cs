using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Net.WebSockets;
using Microsoft.Extensions.Options;
using Tunnel2.Hosting;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Http1;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.ProxyEntry.Access;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Forwarding;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Diagnostics;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Tls;

using Tunnel2.TunnelServer.Hosting;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>
/// Serves one connection of the tunnel port: reads the upgrade request (within the handshake timeout), answers it,
/// and on success runs an <see cref="Uplink"/> straight over the socket, registered for its session, until it closes.
/// </summary>
public sealed class UplinkAcceptor
{
    /// <summary>The longest upgrade request taken, as Kestrel's default limit on request headers.</summary>
    public const int MaxHeadBytes = 32 * 1024;

    /// <summary>How long a refused client gets to take the answer and close before the server closes anyway.</summary>
    private static readonly TimeSpan CloseGrace = TimeSpan.FromSeconds(1);

    private readonly SessionRegistry _registry;
    private readonly UplinkSettings _settings;
    private readonly UplinkHandshake _handshake;
    private readonly TimeSpan _handshakeTimeout;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger<UplinkAcceptor> _logger;
    private readonly TunnelServerMetrics _metrics;
    private readonly PublicDrain _drain;
    private readonly ServerCertificate? _certificate;
    private readonly ServerEndpoints _endpoints;
    private readonly string? _hostSuffix;
    private readonly LoginGuard _guard;
    private readonly VisitorAccess _visitors;
    private readonly CredentialRevocation _revocation;

    public UplinkAcceptor(
        SessionRegistry registry,
        IOptions<TunnelServerOptions> options,
        IOptions<ProxyEntryOptions> proxyOptions,
        ILoggerFactory loggerFactory,
        TunnelServerMetrics metrics,
        PublicDrain drain,
        ServerEndpoints endpoints,
        LoginGuard guard,
        ClientAuthenticator authenticator,
        VisitorAccess visitors,
        CredentialRevocation revocation,
        ServerCertificate? certificate = null)
    {
        _revocation = revocation;
        _visitors = visitors;
        _guard = guard;
        _registry = registry;
        _endpoints = endpoints;
        _hostSuffix = proxyOptions.Value.HostSuffix;
        _settings = options.Value.ToUplinkSettings() with { ResponseHeadTimeout = proxyOptions.Value.ResponseHeadTimeout };
        _handshake = new UplinkHandshake(authenticator, proxyOptions.Value.RetryAfterSeconds, options.Value.ClientVisitorPolicies);
        _handshakeTimeout = options.Value.HandshakeTimeout;
        _loggerFactory = loggerFactory;
        _logger = loggerFactory.CreateLogger<UplinkAcceptor>();
        _metrics = metrics;
        _drain = drain;
        bool tunnelHttps = ListenAddress.TryParse(options.Value.TunnelUrl, out ListenAddress? address, out _) && address.IsHttps;
        _certificate = tunnelHttps ? certificate ?? throw new InvalidOperationException("An https:// tunnel port needs the server certificate.") : null;
    }

    /// <param name="socket">An accepted connection; this method owns and closes it.</param>
    /// <param name="stopping">Cancelled when the server stops: handshakes still in progress end.</param>
    public async Task ServeAsync(Socket socket, CancellationToken stopping)
    {
        socket.NoDelay = true;
        var remote = socket.RemoteEndPoint as IPEndPoint;
        var network = new NetworkStream(socket, ownsSocket: true);
        await using (network)
        {
            if (_certificate is null)
            {
                await ServeAsync(socket, network, remote, stopping);
                return;
            }

            SslStream? tls = await AuthenticateAsync(network, remote, stopping);
            if (tls is null)
            {
                return;
            }

            await using (tls)
            {
                await ServeAsync(socket, tls, remote, stopping);
            }
        }
    }

    /// <param name="connection">The socket's stream, or the TLS stream over it.</param>
    private async Task ServeAsync(Socket socket, Stream connection, IPEndPoint? remote, CancellationToken stopping)
    {
        // Zero-byte reads: an idle uplink (the usual state of most of them) then holds no 64 KiB read buffer while it
        // waits; that buffer was most of an idle session's memory (docs/benchmarks/2026-11-23-idle-sessions.md).
        // SslStream passes a zero-byte read down to the socket once its own buffer is empty.
        DuplexPipe transport = DuplexPipe.Over(connection, zeroByteReads: true);
        HandshakeAcceptance? accepted = await HandshakeAsync(socket, transport, remote, stopping);
        if (accepted is null)
        {
            return;
        }

        _visitors.Declare(accepted.Session, accepted.DeclaredPolicy);

        try
        {
            await ServeUplinkAsync(connection, transport, accepted, remote);
        }
        finally
        {
            if (remote is not null)
            {
                _guard.RemoveUplink(remote.Address);
            }
        }
    }

    private async Task ServeUplinkAsync(Stream connection, DuplexPipe transport, HandshakeAcceptance accepted, IPEndPoint? remote)
    {
        Stream? webSocketStream = null;
        if (accepted.IsWebSocket)
        {
            // The client waits for the 101 before its first message (RFC 6455 §4.1), so nothing may be buffered yet.
            if (transport.Input.TryRead(out ReadResult early) && !early.Buffer.IsEmpty)
            {
                Refused(remote, 400, "websocket-early-data");
                return;
            }

            await transport.Input.CompleteAsync();
            await transport.Output.CompleteAsync();
            WebSocket webSocket = WebSocket.CreateFromStream(connection, new WebSocketCreationOptions { IsServer = true, KeepAliveInterval = TimeSpan.Zero });
            webSocketStream = WebSocketStream.Create(webSocket, WebSocketMessageType.Binary, ownsWebSocket: true);
            transport = DuplexPipe.Over(webSocketStream, zeroByteReads: true);
        }

        try
        {
            await RunUplinkAsync(transport, accepted, remote);
        }
        finally
        {
            if (webSocketStream is not null)
            {
                await webSocketStream.DisposeAsync();
            }
        }
    }

    /// <summary>The TLS handshake, within the same timeout as the upgrade request; null when it failed (logged).</summary>
    private async Task<SslStream?> AuthenticateAsync(Stream network, IPEndPoint? remote, CancellationToken stopping)
    {
        var tls = new SslStream(network, leaveInnerStreamOpen: true);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(_handshakeTimeout);
        try
        {
            await tls.AuthenticateAsServerAsync(
                new SslServerAuthenticationOptions
                {
                    ServerCertificateContext = _certificate!.Context,
                    ApplicationProtocols = [SslApplicationProtocol.Http11],
                },
                timeout.Token);
            return tls;
        }
        catch (Exception ex) when (ex is AuthenticationException or IOException or OperationCanceledException or SocketException)
        {
            await tls.DisposeAsync();
            string reason = ex is OperationCanceledException && !stopping.IsCancellationRequested
                ? $"no TLS handshake within {_handshakeTimeout.TotalSeconds:0.###} s"
                : ex.Message;
            TunnelServerLog.TlsHandshakeFailed(_logger, remote?.Address, reason);
            _metrics.HandshakeRefused("tls-handshake-failed");
            return null;
        }
    }

    /// <returns>The accepted login, with its 101 sent; null when the connection was refused, timed out or went away.</returns>
    private async Task<HandshakeAcceptance?> HandshakeAsync(Socket socket, DuplexPipe transport, IPEndPoint? remote, CancellationToken stopping)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(_handshakeTimeout);
        HandshakeRefusal refusal;
        string instance = HandshakeProtocol.Path;
        try
        {
            Http1Head? head = await Http1Head.ReadAsync(transport.Input, MaxHeadBytes, timeout.Token);
            if (head is null)
            {
                return null; // connected and closed without a word: a port probe
            }

            instance = head.StartLine.Split(' ') is [_, string target, ..] ? target : instance;
            (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = Decide(head, remote);
            if (accepted is not null)
            {
                string publicUrl = PublicSessionUrl.For(accepted.Session, _endpoints.PublicUrl, _hostSuffix, head["Host"]);
                try
                {
                    await transport.Output.WriteAsync(HandshakeAnswer.SwitchingProtocols(accepted, _settings, publicUrl), timeout.Token);
                }
                catch when (remote is not null)
                {
                    _guard.RemoveUplink(remote.Address); // counted by Decide; this login never became an uplink
                    throw;
                }

                return accepted;
            }

            refusal = refused!;
            if (refusal.OutsideCredential is var (credential, session))
            {
                TunnelServerLog.SessionNotAllowed(_logger, remote?.Address, credential, session);
            }
        }
        catch (Http1HeadTooLargeException)
        {
            refusal = new HandshakeRefusal(431, "head-too-large", "Request header fields too large",
                $"The upgrade request must fit in {MaxHeadBytes} bytes.");
        }
        catch (InvalidDataException ex)
        {
            refusal = new HandshakeRefusal(400, "bad-request", "Bad request", ex.Message);
        }
        catch (OperationCanceledException) when (!stopping.IsCancellationRequested)
        {
            refusal = new HandshakeRefusal(408, "handshake-timeout", "Request timeout",
                $"The upgrade request did not arrive within {_handshakeTimeout.TotalSeconds:0.###} s.");
        }
        catch (Exception ex) when (ex is OperationCanceledException or IOException or SocketException)
        {
            TunnelServerLog.HandshakeAbandoned(_logger, remote?.Address, ex.Message);
            return null; // the client went away, or the server is stopping
        }

        Refused(remote, refusal.Status, refusal.Reason);
        await AnswerAndCloseAsync(socket, transport, HandshakeAnswer.Refusal(refusal, instance));
        return null;
    }

    /// <summary>
    /// The login's answer with the per-address limits applied: the (cheap, synchronous) handshake decision first, then
    /// one step that refuses an address out of failed logins, whatever its token, or counts a refused token against it;
    /// an accepted login must fit under the address's uplink cap (the caller removes it from the count when the uplink
    /// ends).
    /// </summary>
    private (HandshakeAcceptance? Accepted, HandshakeRefusal? Refused) Decide(Http1Head head, IPEndPoint? remote)
    {
        (HandshakeAcceptance? accepted, HandshakeRefusal? refused) = _handshake.Decide(head, _drain.IsDraining);
        if (remote is null)
        {
            return (accepted, refused);
        }

        bool failed = refused is { Status: StatusCodes.Status401Unauthorized or StatusCodes.Status403Forbidden };
        if (_guard.Judge(remote.Address, failed, out TimeSpan retryAfter) == AttemptVerdict.Blocked)
        {
            return (null, TooMany("too-many-failed-logins", "Too many failed logins",
                "This address sent too many wrong or missing tokens; try again later (TunnelServer:MaxFailedLoginsPerMinute).", retryAfter));
        }

        if (accepted is not null && !_guard.TryAddUplink(remote.Address))
        {
            return (null, TooMany("too-many-uplinks", "Too many uplinks",
                "This address holds as many uplinks as it may (TunnelServer:MaxUplinksPerAddress).", TimeSpan.FromSeconds(5)));
        }

        return (accepted, refused);
    }

    private static HandshakeRefusal TooMany(string reason, string title, string detail, TimeSpan retryAfter) =>
        new(StatusCodes.Status429TooManyRequests, reason, title, detail,
            new KeyValuePair<string, string>("Retry-After", Math.Max(1, (int)Math.Ceiling(retryAfter.TotalSeconds)).ToString(System.Globalization.CultureInfo.InvariantCulture)));

    private void Refused(IPEndPoint? remote, int status, string reason)
    {
        TunnelServerLog.HandshakeRefused(_logger, remote?.Address, status, reason);
        _metrics.HandshakeRefused(reason);
    }

    /// <summary>
    /// Sends a refusal and closes gracefully: the sending side first, then whatever the client still sends is read and
    /// dropped for a moment, so that closing with unread bytes does not reset the connection before the answer is read.
    /// </summary>
    private static async Task AnswerAndCloseAsync(Socket socket, DuplexPipe transport, byte[] answer)
    {
        using var grace = new CancellationTokenSource(CloseGrace);
        try
        {
            await transport.Output.WriteAsync(answer, grace.Token);
            socket.Shutdown(SocketShutdown.Send);
            while (true)
            {
                ReadResult read = await transport.Input.ReadAsync(grace.Token);
                transport.Input.AdvanceTo(read.Buffer.End);
                if (read.IsCompleted)
                {
                    return;
                }
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or IOException or SocketException or ObjectDisposedException)
        {
            // The client did not close in time, or already did: the connection closes either way.
        }
    }

    private async Task RunUplinkAsync(DuplexPipe transport, HandshakeAcceptance accepted, IPEndPoint? remote)
    {
        string transportName = accepted.IsWebSocket ? "websocket" : "upgrade";
        using var uplink = new Uplink(transport, _settings with { ProtocolVersion = accepted.Version }, UplinkRole.Server, _loggerFactory.CreateLogger<Uplink>(),
            name: $"{accepted.Session}@{remote}{(accepted.IsWebSocket ? " (websocket)" : string.Empty)}")
        {
            PeerReady = accepted.Ready,
        };

        Uplink? replaced = _registry.Register(accepted.Session, uplink, accepted.Instance, accepted.Weight, remote?.ToString(),
            accepted.IsWebSocket ? "websocket" : "upgrade");
        _revocation.LoggedIn(uplink, accepted.Session, accepted.Login);
        _metrics.UplinkConnected();
        TunnelServerLog.UplinkConnected(_logger, accepted.Session, remote?.Address, accepted.Version, transportName);
        if (replaced is not null)
        {
            TunnelServerLog.UplinkReplaced(_logger, accepted.Session, replaced.Name, accepted.Instance!, SessionRegistry.ReplacedReason);
        }

        try
        {
            // Shutdown does not cut the uplink: the drain (GracefulShutdown) closes it after its streams finish, and the
            // reader sees the end of the connection itself, so a frame cut short by the peer is reported as the protocol
            // error it is rather than as a local stop.
            await uplink.RunAsync(CancellationToken.None);
        }
        finally
        {
            _registry.Unregister(accepted.Session, uplink);
            _revocation.LoggedOut(uplink);
            _metrics.UplinkDisconnected();
            TunnelServerLog.UplinkDisconnected(_logger, accepted.Session, remote?.Address, uplink.CloseReason ?? "closed");
        }
    }
}
