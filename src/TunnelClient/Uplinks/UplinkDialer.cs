using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Authentication;
using System.Text;
using Microsoft.Extensions.Options;
using Tunnel2.Protocol.Handshake;
using Tunnel2.Protocol.Multiplexing;
using Tunnel2.Hosting.Sockets;
using Tunnel2.TunnelClient.Configuration;
using Tunnel2.TunnelClient.Health;
using Tunnel2.TunnelClient.EventLoops;
using Tunnel2.TunnelClient.Tls;

namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>Opens a TCP connection to the server, performs the HTTP/1.1 upgrade and wraps the result in an <see cref="Uplink"/>.</summary>
public sealed partial class UplinkDialer : IDisposable
{
    private readonly TunnelClientOptions _options;
    private readonly KeyValuePair<string, string>[] _visitorRules;
    private readonly IUplinkStreamHandler _relay;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ClientInstance _instance;
    private readonly BackendHealth _health;
    private readonly Tcp.TcpClusterPort _tcpPort;
    private readonly ClientLoop? _loop;
    private ServerCertificatePolicy? _certificatePolicy;
    private bool _loopUnavailable;

    public UplinkDialer(IOptions<TunnelClientOptions> options, IUplinkStreamHandler relay, ILoggerFactory loggerFactory, ClientInstance instance, BackendHealth health, ClientLoop? loop = null)
    {
        _loop = loop;
        _instance = instance;
        _health = health;
        _options = options.Value;
        _visitorRules = VisitorRuleHeaders.From(_options);
        _relay = relay;
        _loggerFactory = loggerFactory;
        _tcpPort = new Tcp.TcpClusterPort(loggerFactory.CreateLogger<UplinkDialer>());
    }

    public void Dispose() => _tcpPort.Dispose();

    /// <exception cref="UplinkRefusedException">The server answered with an HTTP error.</exception>
    /// <param name="server">The server (one of <see cref="TunnelClientOptions.Server"/>) to dial.</param>
    /// <param name="slot">Which of the client's uplinks this is, over all servers (0 … servers × Uplinks - 1).</param>
    public Task<DialedUplink> ConnectAsync(Uri server, int slot, CancellationToken cancellationToken) =>
        ConnectAsync(new UplinkTarget(server), slot, cancellationToken);

    /// <inheritdoc cref="ConnectAsync(Uri, int, CancellationToken)"/>
    /// <param name="target">The server, and the one address of its name to dial when it names several nodes.</param>
    /// <param name="slot">Which of the client's uplinks this is; never the same for two uplinks of one client.</param>
    public async Task<DialedUplink> ConnectAsync(UplinkTarget target, int slot, CancellationToken cancellationToken)
    {
        bool first = _options.Tcp.Target is not null && await _tcpPort.WaitForFirstLoginAsync(cancellationToken);
        try
        {
            return await LogInAsync(target, slot, cancellationToken);
        }
        finally
        {
            if (first)
            {
                _tcpPort.EndFirstLogin();
            }
        }
    }

    private async Task<DialedUplink> LogInAsync(UplinkTarget target, int slot, CancellationToken cancellationToken)
    {
        Uri server = target.Server;
        string instanceId = _instance.ForUplink(slot);

        // The login reports the backend's health, so the server does not route to a backend nobody has probed yet.
        await _health.FirstProbe.WaitAsync(cancellationToken);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(_options.ConnectTimeout);
        if (_options.Uplink.Transport == ClientUplinkOptions.WebSocketTransport)
        {
            return await ConnectWebSocketAsync(target, instanceId, slot, timeout.Token);
        }

        if (server.Scheme == Uri.UriSchemeHttp && LoopForUplinks() is { } loop)
        {
            return await LogInOnLoopAsync(loop, target, instanceId, slot, timeout.Token);
        }

#pragma warning disable CA2000 // the socket, its stream and the uplink go to the DialedUplink, which owns them; the catch disposes them on a failure
        Socket socket = CreateUplinkSocket();
        Stream? network = null;
        try
        {
            await socket.ConnectAsync(EndPointOf(target), timeout.Token);
            network = new NetworkStream(socket, ownsSocket: true);
            if (server.Scheme == Uri.UriSchemeHttps)
            {
                network = await AuthenticateAsync(server, network, timeout.Token);
            }

            var transport = DuplexPipe.Over(network);
            HandshakeResponse response = await UpgradeAsync(transport, server, instanceId, timeout.Token);
            UplinkSettings settings = NegotiatedSettings(name => response[name]);
            string? tcpAddress = TcpAddressOf(settings, response[HandshakeProtocol.TcpAddressHeader], target.Label);
            string name = $"{_options.Session}->{target.Label} #{slot}";
            var uplink = new Uplink(transport, settings, UplinkRole.Client, _loggerFactory.CreateLogger<Uplink>(), _relay, name);
            return new DialedUplink(network, uplink, publicUrl: response[HandshakeProtocol.PublicUrlHeader]) { TcpAddress = tcpAddress };
#pragma warning restore CA2000
        }
        catch
        {
            if (network is not null)
            {
                await network.DisposeAsync();
            }
            else
            {
                socket.Dispose();
            }

            throw;
        }
    }

    private Socket CreateUplinkSocket()
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        UnsentBytesLimit.TryApply(socket, _options.Uplink.UnsentBytesLimit);
        UplinkReceiveBuffer.TryApply(socket, _options.Uplink.ReceiveBuffer); // before connect, so the window scale fits it
        UplinkSegmentSize.TryApply(socket, _options.Uplink.SegmentSize);
        return socket;
    }

    /// <summary>Sends the upgrade request and reads the answer, which must switch to the tunnel protocol.</summary>
    /// <exception cref="UplinkRefusedException">The server answered with an HTTP error.</exception>
    private async Task<HandshakeResponse> UpgradeAsync(DuplexPipe transport, Uri server, string instanceId, CancellationToken cancellationToken)
    {
        await transport.Output.WriteAsync(BuildRequest(server, instanceId), cancellationToken);
        HandshakeResponse response = await HandshakeResponse.ReadAsync(transport.Input, cancellationToken);
        return Upgraded(response);
    }

    /// <summary>The answer, when it switched to the tunnel protocol.</summary>
    /// <exception cref="UplinkRefusedException">The server answered with an HTTP error.</exception>
    private static HandshakeResponse Upgraded(HandshakeResponse response)
    {
        if (response.StatusCode != StatusCodes.Status101SwitchingProtocols)
        {
            throw new UplinkRefusedException(response.StatusCode, response.Body);
        }

        if (!string.Equals(response["Upgrade"], HandshakeProtocol.UpgradeToken, StringComparison.OrdinalIgnoreCase))
        {
            throw new IOException($"The server switched to '{response["Upgrade"]}' instead of {HandshakeProtocol.UpgradeToken}.");
        }

        return response;
    }

    /// <summary>TLS over the connection; the returned stream owns <paramref name="network"/>.</summary>
    /// <exception cref="ServerCertificateRejectedException">The server's certificate is not trusted.</exception>
    private async Task<SslStream> AuthenticateAsync(Uri server, Stream network, CancellationToken cancellationToken)
    {
        string? refusal = null;
        SslClientAuthenticationOptions options = CertificatePolicy.CreateOptions(server.IdnHost, reason => refusal = reason);
        var tls = new SslStream(network, leaveInnerStreamOpen: false);
        try
        {
            await tls.AuthenticateAsClientAsync(options, cancellationToken);
            return tls;
        }
        catch (AuthenticationException ex) when (refusal is not null)
        {
            await tls.DisposeAsync();
            throw new ServerCertificateRejectedException(refusal, ex);
        }
        catch
        {
            await tls.DisposeAsync();
            throw;
        }
    }

    private ServerCertificatePolicy CertificatePolicy => _certificatePolicy ??= new ServerCertificatePolicy(_options);

    private static EndPoint EndPointOf(UplinkTarget target) =>
        target.Address is { } address ? new IPEndPoint(address, target.Server.Port) : new DnsEndPoint(target.Server.Host, target.Server.Port);

    /// <summary>The same handshake as a WebSocket upgrade; the frames then travel in binary messages.</summary>
    private async Task<DialedUplink> ConnectWebSocketAsync(UplinkTarget target, string instanceId, int slot, CancellationToken cancellationToken)
    {
        Uri server = target.Server;
#pragma warning disable CA2000 // the WebSocket goes to the uplink's stream (ownsWebSocket) or is disposed where the dial fails
        var webSocket = new ClientWebSocket();
#pragma warning restore CA2000
        string? refusal = null;
        HttpMessageInvoker? invoker = null;
        try
        {
            invoker = CreateInvoker(target, reason => refusal = reason);
            SetHandshakeHeaders(webSocket.Options, instanceId);
            var url = new UriBuilder(server)
            {
                Scheme = server.Scheme == Uri.UriSchemeHttps ? Uri.UriSchemeWss : Uri.UriSchemeWs,
                Path = HandshakeProtocol.Path,
            }.Uri;
            try
            {
                await webSocket.ConnectAsync(url, invoker, cancellationToken);
            }
            catch (Exception ex) when (refusal is not null && ex is WebSocketException or HttpRequestException)
            {
                throw new ServerCertificateRejectedException(refusal, ex);
            }
            catch (WebSocketException ex) when (webSocket.HttpStatusCode is not 0 and not HttpStatusCode.SwitchingProtocols)
            {
                // The head only: the problem's type comes in its header, its detail (in the body) is not seen.
                throw webSocket.HttpResponseHeaders?.TryGetValue(HandshakeProtocol.ProblemHeader, out IEnumerable<string>? problem) == true
                    ? new UplinkRefusedException(LoginRefusal.From((int)webSocket.HttpStatusCode, problem.FirstOrDefault(), string.Empty))
                    : new UplinkRefusedException((int)webSocket.HttpStatusCode, ex.Message);
            }
            catch (WebSocketException ex)
            {
                throw new IOException($"WebSocket handshake failed: {ex.Message}", ex);
            }

            return WrapWebSocket(webSocket, invoker, target, slot);
        }
        catch
        {
            webSocket.Dispose();
            invoker?.Dispose();
            throw;
        }
    }

    /// <summary>
    /// A handler of its own, or null for ClientWebSocket's default: it carries the trust settings (a private CA, a pin) that
    /// ClientWebSocket's options cannot, and dials the one node's address when the name has several.
    /// </summary>
    private HttpMessageInvoker? CreateInvoker(UplinkTarget target, Action<string> onRefusal)
    {
        Uri server = target.Server;
        if (server.Scheme != Uri.UriSchemeHttps && target.Address is null)
        {
            return null;
        }

#pragma warning disable CA2000 // the returned HttpMessageInvoker owns its handler (disposeHandler defaults to true)
        var handler = new SocketsHttpHandler { ConnectTimeout = _options.ConnectTimeout };
#pragma warning restore CA2000
        if (server.Scheme == Uri.UriSchemeHttps)
        {
            handler.SslOptions = CertificatePolicy.CreateOptions(server.IdnHost, onRefusal);
        }

        if (target.Address is not null)
        {
            handler.ConnectCallback = (_, token) => ConnectStreamAsync(EndPointOf(target), token);
        }

        return new HttpMessageInvoker(handler);
    }

    /// <summary>The login's headers, the same as <see cref="BuildRequest"/> sends on the HTTP/1.1 upgrade.</summary>
    private void SetHandshakeHeaders(ClientWebSocketOptions options, string instanceId)
    {
        options.CollectHttpResponseDetails = true;
        options.KeepAliveInterval = TimeSpan.Zero; // the uplink's own Ping frames watch the link
        options.SetRequestHeader("Authorization", $"Bearer {_options.Token}");
        options.SetRequestHeader(HandshakeProtocol.SessionHeader, _options.Session);
        options.SetRequestHeader(HandshakeProtocol.VersionHeader, HandshakeProtocol.OfferedVersions);
        options.SetRequestHeader(HandshakeProtocol.InstanceHeader, instanceId);
        options.SetRequestHeader(HandshakeProtocol.WeightHeader, _options.Weight.ToString(CultureInfo.InvariantCulture));
        options.SetRequestHeader(HandshakeProtocol.HealthHeader, HealthValue);
        foreach (KeyValuePair<string, string> rule in _visitorRules)
        {
            options.SetRequestHeader(rule.Key, rule.Value);
        }

        if (_options.Tcp.Target is not null)
        {
            options.SetRequestHeader(HandshakeProtocol.TcpHeader, HandshakeProtocol.TcpOn);
            if (_tcpPort.Wanted is { } port)
            {
                options.SetRequestHeader(HandshakeProtocol.TcpPortHeader, port.ToString(CultureInfo.InvariantCulture));
            }
        }
    }

    /// <summary>The uplink over the connected WebSocket, with the settings its 101 response negotiated.</summary>
    /// <exception cref="UplinkRefusedException">The client asked for TCP and the server gave no port.</exception>
    private DialedUplink WrapWebSocket(ClientWebSocket webSocket, HttpMessageInvoker? invoker, UplinkTarget target, int slot)
    {
        IReadOnlyDictionary<string, IEnumerable<string>> headers = webSocket.HttpResponseHeaders ?? new Dictionary<string, IEnumerable<string>>();
        UplinkSettings settings = NegotiatedSettings(name => headers.TryGetValue(name, out IEnumerable<string>? values) ? string.Join(',', values) : null);
        string? tcpAddress = TcpAddressOf(settings,
            headers.TryGetValue(HandshakeProtocol.TcpAddressHeader, out IEnumerable<string>? tcpValues) ? tcpValues.FirstOrDefault() : null, target.Label);
        Stream stream = WebSocketStream.Create(webSocket, WebSocketMessageType.Binary, ownsWebSocket: true);
#pragma warning disable CA2000 // the uplink goes to the DialedUplink, which owns and disposes it
        var uplink = new Uplink(DuplexPipe.Over(stream), settings, UplinkRole.Client, _loggerFactory.CreateLogger<Uplink>(), _relay,
            name: $"{_options.Session}->{target.Label} #{slot} (websocket)");
#pragma warning restore CA2000
        return new DialedUplink(stream, uplink, invoker,
            headers.TryGetValue(HandshakeProtocol.PublicUrlHeader, out IEnumerable<string>? urls) ? urls.FirstOrDefault() : null)
        {
            TcpAddress = tcpAddress,
        };
    }

    private static async ValueTask<Stream> ConnectStreamAsync(EndPoint endPoint, CancellationToken cancellationToken)
    {
#pragma warning disable CA2000 // the returned NetworkStream owns the socket (ownsSocket); the catch disposes it on a failure
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
#pragma warning restore CA2000
        try
        {
            await socket.ConnectAsync(endPoint, cancellationToken);
            return new NetworkStream(socket, ownsSocket: true);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private byte[] BuildRequest(Uri server, string instanceId)
    {
        var request = new StringBuilder(256)
            .Append(CultureInfo.InvariantCulture, $"GET {HandshakeProtocol.Path} HTTP/1.1\r\n")
            .Append(CultureInfo.InvariantCulture, $"Host: {server.Authority}\r\n")
            .Append("Connection: Upgrade\r\n")
            .Append(CultureInfo.InvariantCulture, $"Upgrade: {HandshakeProtocol.UpgradeToken}\r\n")
            .Append(CultureInfo.InvariantCulture, $"Authorization: Bearer {_options.Token}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.SessionHeader}: {_options.Session}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.VersionHeader}: {HandshakeProtocol.OfferedVersions}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.InstanceHeader}: {instanceId}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.WeightHeader}: {_options.Weight}\r\n")
            .Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.HealthHeader}: {HealthValue}\r\n");
        foreach (KeyValuePair<string, string> rule in _visitorRules)
        {
            request.Append(CultureInfo.InvariantCulture, $"{rule.Key}: {rule.Value}\r\n");
        }

        if (_options.Tcp.Target is not null)
        {
            request.Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.TcpHeader}: {HandshakeProtocol.TcpOn}\r\n");
            if (_tcpPort.Wanted is { } port)
            {
                request.Append(CultureInfo.InvariantCulture, $"{HandshakeProtocol.TcpPortHeader}: {port}\r\n");
            }
        }

        request.Append("\r\n");
        return Encoding.UTF8.GetBytes(request.ToString());
    }

    /// <summary>
    /// The public TCP address a TCP login was given. A server that answers 101 without one (older than version 5) cannot
    /// carry the client's TCP service: the login counts as refused, and retrying the same server cannot help.
    /// </summary>
    /// <exception cref="UplinkRefusedException">The client asked for TCP and the server gave no port.</exception>
    private string? TcpAddressOf(UplinkSettings settings, string? address, string server)
    {
        if (_options.Tcp.Target is null)
        {
            return null;
        }

        if (settings.ProtocolVersion < HandshakeProtocol.TcpVersion || string.IsNullOrEmpty(address))
        {
            throw new UplinkRefusedException(LoginRefusal.From(403, LoginRefusal.TcpUnsupported, LoginRefusal.Sentence(
                $"the server does not carry TCP tunnels (it chose protocol version {settings.ProtocolVersion} and named no TCP port; version {HandshakeProtocol.TcpVersion} is needed)")));
        }

        _tcpPort.OnGiven(address, server);
        return address;
    }

    private string HealthValue => _health.IsReady ? HandshakeProtocol.Ready : HandshakeProtocol.Unready;

    private UplinkSettings NegotiatedSettings(Func<string, string?> header)
    {
        // A server that names no version predates the header's answer being read: it speaks version 3.
        int version = int.TryParse(header(HandshakeProtocol.VersionHeader), CultureInfo.InvariantCulture, out int chosen)
                      && HandshakeProtocol.SupportedVersions.Contains(chosen)
            ? chosen
            : 3;
        var settings = new UplinkSettings
        {
            ProtocolVersion = version,
            KeepAliveInterval = _options.Uplink.KeepAliveInterval,
            KeepAliveTimeout = _options.Uplink.KeepAliveTimeout,
            QueuedDataLimit = _options.Uplink.QueuedDataLimit,
        };
        if (int.TryParse(header(HandshakeProtocol.MaxFramePayloadHeader), CultureInfo.InvariantCulture, out int maxFrame) && maxFrame > 0)
        {
            settings = settings with { MaxFramePayload = maxFrame };
        }

        if (int.TryParse(header(HandshakeProtocol.InitialWindowHeader), CultureInfo.InvariantCulture, out int window) && window > 0)
        {
            settings = settings with { InitialStreamWindow = window };
        }

        if (int.TryParse(header(HandshakeProtocol.ConnectionWindowHeader), CultureInfo.InvariantCulture, out int connectionWindow) && connectionWindow > 0)
        {
            settings = settings with { ConnectionWindow = connectionWindow };
        }

        if (int.TryParse(header(HandshakeProtocol.MaxStreamsHeader), CultureInfo.InvariantCulture, out int streams) && streams > 0)
        {
            settings = settings with { MaxConcurrentStreams = streams };
        }

        return settings;
    }
}
